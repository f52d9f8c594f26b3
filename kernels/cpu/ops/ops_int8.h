// Check and plan functions of the cpu backend's int8 ops (the quantized scheme of lib/quant:
// per-tensor asymmetric int8 activations, per-output-channel symmetric int8 weights, int32 bias),
// listed in kernel_table.cpp's int8 table and chosen for nodes whose first input is int8.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cpu/plan/kernel_table.h"
#include "lib/ops/int8_params.h"
#include "lib/ir/tensor.h"

namespace mt::cpu {

#define MT_CPU_INT8_OP(name)                                                           \
  std::optional<std::string> check_##name##_int8(const Graph& graph, const Node& node); \
  void plan_##name##_int8(NodeContext& context);

// ops_int8.cpp: avg_pool2d (a portable NHWC kernel: this XNNPACK's average pooling is qu8 only),
// XNNPACK qc8 convolution (general, depthwise, pointwise; linear as a 1x1
// convolution, since this XNNPACK's qs8 fully connected has one weight scale only), s8 max
// pooling, qs8 global average pooling
MT_CPU_INT8_OP(conv2d)
MT_CPU_INT8_OP(linear)
MT_CPU_INT8_OP(max_pool2d)
MT_CPU_INT8_OP(avg_pool2d)
MT_CPU_INT8_OP(global_avg_pool)
// ops_int8_elementwise.cpp: qs8 add and mul, qs8 sigmoid, hardswish, silu and hardsigmoid (256-entry
// tables), concat (requantizing inputs whose parameters differ from the output's), and the ops that
// move int8 bytes unchanged (reshape family, transpose, split, slice)
MT_CPU_INT8_OP(add)
MT_CPU_INT8_OP(mul)
MT_CPU_INT8_OP(sigmoid)
MT_CPU_INT8_OP(hardswish)
MT_CPU_INT8_OP(silu)
MT_CPU_INT8_OP(hardsigmoid)
MT_CPU_INT8_OP(data_movement)

#undef MT_CPU_INT8_OP

// ops_int8_vnni.cpp: the int8 convs, linears, muls and global average pools that int8_vnni.h's
// AVX512-VNNI kernels run, for plans where NodeContext::int8_vnni(). Convs: one group (1x1 as a GEMM,
// kxk up to 64 taps as an indirect GEMM) and 3x3 / 5x5 depthwise; false leaves any other conv to
// XNNPACK. Linear: every shape.
bool plan_conv2d_int8_vnni(NodeContext& context);
void plan_linear_int8_vnni(NodeContext& context);
// mul where one operand has the output's shape and the other is that shape or broadcast over rows
// of 16 values or more (squeeze-excitation's per-channel scale); false leaves it to XNNPACK.
bool plan_mul_int8_vnni(NodeContext& context);
void plan_global_avg_pool_int8_vnni(NodeContext& context);
void plan_max_pool2d_int8_vnni(NodeContext& context);
// Whether node `consumer`, reading the current node's output 0 as its input, is a depthwise conv
// that will apply the current node's activation table itself as it reads its input rows
// (DeferredLookup): on the VNNI kernels, with conv fusion on (MT_CPU_CONV_FUSION).
bool depthwise_takes_input_lookup(NodeContext& context, size_t consumer);

// The 256-entry table (the output for input q at q + 128) of an int8 hardswish, silu or hardsigmoid
// node that the cpu backend runs, or nullopt for any other node (ops_int8_elementwise.cpp). The VNNI
// convs apply it to their own output when such a node alone reads it.
std::optional<std::array<int8_t, 256>> int8_activation_table(const Graph& graph, const Node& node);

// Int8Params, check_int8_activation, int8_params, int8_weight_scales: lib/ops/int8_params.h.
// The node's fused act_min / act_max clamp as int8 bounds of output parameters `y`.
std::pair<int8_t, int8_t> int8_output_bounds(const Node& node, Int8Params y);

}  // namespace mt::cpu
