// Check and plan functions of every op the Vulkan backend runs, defined in the op family's file
// (ops_<family>.cpp) and listed in kernel_table.cpp.
#pragma once

#include "kernels/vulkan/plan/kernel_table.h"
#include "lib/ops/int8_params.h"

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
// ops_int8.cpp: the int8 variants (kernel_table.cpp's int8 table, for nodes whose first input is
// int8); the other int8 ops plan with their float planners (binary, pool2d, global_pool, the shape
// ops), which read the int8 parameters themselves.
MT_VULKAN_OP(conv2d_int8)
MT_VULKAN_OP(linear_int8)
MT_VULKAN_OP(lookup_int8)  // sigmoid, hardswish, hardsigmoid as a 256-entry table
std::optional<std::string> check_binary_int8(const Graph& graph, const Node& node);
std::optional<std::string> check_pool2d_int8(const Graph& graph, const Node& node);
std::optional<std::string> check_global_pool_int8(const Graph& graph, const Node& node);
std::optional<std::string> check_data_movement_int8(const Graph& graph, const Node& node);

#undef MT_VULKAN_OP

// A node of the int8 table: its first input is int8 with parameters (dequantize, int8 in and
// float32 out, is a float node).
bool is_int8_node(const Graph& graph, const Node& node);
// An int8 node's input i in its output's quantization parameters: the input itself where they are
// equal, else a scratch tensor of this node requantized from it (an int8_lookup table, y =
// quantize(dequantize(x)) as the reference concat computes it).
Tensor int8_input_with_output_parameters(NodeContext& ctx, size_t i);

// How many invocations of a linear shader's workgroup share one output block's K axis of
// `k_blocks` blocks of 4 (the rest of the 64 take other outputs): a power of two up to 8 that
// leaves each at least 4 blocks. Measured on lavapipe (1280 -> 1000, CPU time): 8 is the fastest of
// 1 to 64; one invocation per output block takes several times as long, 64 about twice (the
// reduction's barriers cost more than they share).
inline uint32_t linear_split(int64_t k_blocks) {
  uint32_t split = 1;
  while (split < 8 && static_cast<int64_t>(split) * 8 <= k_blocks) split *= 2;
  return split;
}

// The fused clamp of a node (act_min, act_max): a bound at +-FLT_MAX means none (infinite).
std::pair<double, double> activation_bounds(const Node& node);

// The weights buffer of a conv/linear node's bias (input 2) packed per block of 4 channels: stored
// by mt-prepack, packed from the constant, or zeros when the node has none.
int bias_weights(NodeContext& ctx, int64_t channels);

// Why a node whose input `i` must be a constant cannot run, or nullopt.
std::optional<std::string> require_constant(const Graph& graph, const Node& node, size_t i, const char* what);

}  // namespace mt::vulkan
