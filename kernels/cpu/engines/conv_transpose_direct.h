// conv_transpose2d with weights computed at run time, for the graphs XNNPACK cannot take (it packs
// weights once, at operator creation): a direct gather over NHWC activations.
#pragma once

#include "kernels/cpu/plan/plan_builder.h"

namespace mt::cpu {

void plan_conv_transpose2d_runtime_weights(NodeContext& context);

}  // namespace mt::cpu
