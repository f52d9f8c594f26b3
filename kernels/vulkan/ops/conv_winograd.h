// conv2d 3x3 stride 1 through Winograd F(2x2, 3x3) on the Vulkan backend: the rule that picks it,
// and the three dispatches (shaders/winograd_{input,gemm,output}.comp) that compute it.
#pragma once

#include "kernels/vulkan/plan/plan_builder.h"

namespace mt::vulkan {

// True when plan_conv2d runs `node` through Winograd: 3x3, stride 1, dilation 1, one group, and at
// least kWinogradMinChannels input and output channels (below that the transforms cost more than
// the 2.25x fewer multiplications save; docs/vulkan-gpu.md has the measurement).
bool use_winograd(const Graph& graph, const Node& node);

void plan_conv2d_winograd(NodeContext& ctx);

}  // namespace mt::vulkan
