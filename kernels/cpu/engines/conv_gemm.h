// conv2d with weights computed at run time, for the graphs XNNPACK cannot take (it packs weights
// once, at operator creation): im2col and the portable gemm on NHWC activations.
#pragma once

#include "kernels/cpu/plan/plan_builder.h"

namespace mt::cpu {

void plan_conv2d_runtime_weights(NodeContext& context);

}  // namespace mt::cpu
