// Check and plan functions of every op the Vulkan backend runs, defined in the op family's file
// (ops_<family>.cpp) and listed in kernel_table.cpp.
#pragma once

#include "kernels/vulkan/plan/kernel_table.h"

namespace mt::vulkan {

#define MT_VULKAN_OP(name)                                                       \
  std::optional<std::string> check_##name(const Graph& graph, const Node& node); \
  void plan_##name(NodeContext& context);

// ops_elementwise.cpp
MT_VULKAN_OP(unary)
MT_VULKAN_OP(binary)
MT_VULKAN_OP(where)
MT_VULKAN_OP(batch_norm)
// ops_conv.cpp
MT_VULKAN_OP(conv2d)
MT_VULKAN_OP(conv_transpose2d)
// ops_pool.cpp
MT_VULKAN_OP(pool2d)
MT_VULKAN_OP(global_pool)
// ops_reduce.cpp
MT_VULKAN_OP(reduce)
MT_VULKAN_OP(softmax)
MT_VULKAN_OP(layer_norm)
// ops_linear.cpp
MT_VULKAN_OP(linear)
MT_VULKAN_OP(matmul)
// ops_shape.cpp
MT_VULKAN_OP(reshape)
MT_VULKAN_OP(transpose)
MT_VULKAN_OP(slice)
MT_VULKAN_OP(concat)
MT_VULKAN_OP(split)
MT_VULKAN_OP(expand)
MT_VULKAN_OP(pad)
MT_VULKAN_OP(gather)
// ops_resize.cpp
MT_VULKAN_OP(resize)

#undef MT_VULKAN_OP

// The fused clamp of a node (act_min, act_max): a bound at +-FLT_MAX means none (infinite).
std::pair<double, double> activation_bounds(const Node& node);

// The weights buffer of a conv/linear node's bias (input 2) packed per block of 4 channels: stored
// by mt-prepack, packed from the constant, or zeros when the node has none.
int bias_weights(NodeContext& ctx, int64_t channels);

// Why a node whose input `i` must be a constant cannot run, or nullopt.
std::optional<std::string> require_constant(const Graph& graph, const Node& node, size_t i, const char* what);

}  // namespace mt::vulkan
