// One line per op: the op name, its check and its planner (ops.h). mt-opnames --check vulkan and
// the op harness read this table through check_node; the op table's vulkan column
// (lib/ops/op_table.inc) must name the same ops (tests/unit/ops/test_op_table.cpp).
#include "kernels/vulkan/plan/kernel_table.h"

#include <algorithm>
#include <array>
#include <limits>
#include <vector>

#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/weight_layout.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

#define OP(name, fn) VulkanKernel{name, check_##fn, plan_##fn}

constexpr std::array kKernels{
    // activation family (shaders/unary.comp, binary.comp for prelu)
    OP("relu", unary),
    OP("clamp", unary),
    OP("sigmoid", unary),
    OP("tanh", unary),
    OP("hardswish", unary),
    OP("hardsigmoid", unary),
    OP("silu", unary),
    OP("gelu", unary),
    OP("leaky_relu", unary),
    OP("elu", unary),
    OP("exp", unary),
    OP("log", unary),
    OP("sqrt", unary),
    OP("neg", unary),
    OP("abs", unary),
    OP("reciprocal", unary),
    OP("floor", unary),
    OP("ceil", unary),
    OP("erf", unary),
    OP("softplus", unary),
    OP("prelu", binary),
    // binary family
    OP("add", binary),
    OP("sub", binary),
    OP("mul", binary),
    OP("div", binary),
    OP("pow", binary),
    OP("max", binary),
    OP("min", binary),
    // logic family (bool tensors as 0.0 / 1.0: binary.comp, unary.comp, select.comp)
    OP("equal", binary),
    OP("less", binary),
    OP("less_or_equal", binary),
    OP("greater", binary),
    OP("greater_or_equal", binary),
    OP("logical_and", binary),
    OP("logical_or", binary),
    OP("logical_xor", binary),
    OP("logical_not", unary),
    OP("where", where),
    // reduce family
    OP("reduce_mean", reduce),
    OP("reduce_sum", reduce),
    OP("reduce_max", reduce),
    OP("reduce_min", reduce),
    OP("softmax", softmax),
    OP("log_softmax", softmax),
    // norm family
    OP("batch_norm", batch_norm),
    OP("layer_norm", layer_norm),
    // linear family
    OP("linear", linear),
    OP("matmul", matmul),
    // conv family
    OP("conv2d", conv2d),
    OP("conv_transpose2d", conv_transpose2d),
    // pool family
    OP("max_pool2d", pool2d),
    OP("avg_pool2d", pool2d),
    OP("global_avg_pool", global_pool),
    OP("global_max_pool", global_pool),
    // resize family
    OP("resize", resize),
    OP("pad", pad),
    // shape family
    OP("reshape", reshape),
    OP("flatten", reshape),
    OP("squeeze", reshape),
    OP("unsqueeze", reshape),
    OP("identity", reshape),
    OP("transpose", transpose),
    OP("concat", concat),
    OP("split", split),
    OP("slice", slice),
    OP("expand", expand),
    OP("gather", gather),
    // quant family (unary.comp)
    OP("quantize", unary),
    OP("dequantize", unary),
};

// int8 nodes: the check of the int8 variant, and its planner (ops_int8.cpp, or the float planner
// where one shader does both).
#define INT8(name, check, plan) VulkanKernel{name, check_##check, plan_##plan}

constexpr std::array kInt8Kernels{
    INT8("conv2d", conv2d_int8, conv2d_int8), INT8("linear", linear_int8, linear_int8),
    INT8("add", binary_int8, binary), INT8("mul", binary_int8, binary),
    INT8("max_pool2d", pool2d_int8, pool2d), INT8("avg_pool2d", pool2d_int8, pool2d),
    INT8("global_avg_pool", global_pool_int8, global_pool), INT8("sigmoid", lookup_int8, lookup_int8),
    INT8("hardswish", lookup_int8, lookup_int8), INT8("hardsigmoid", lookup_int8, lookup_int8),
    INT8("silu", lookup_int8, lookup_int8),
    INT8("reshape", data_movement_int8, reshape), INT8("flatten", data_movement_int8, reshape),
    INT8("squeeze", data_movement_int8, reshape), INT8("unsqueeze", data_movement_int8, reshape),
    INT8("identity", data_movement_int8, reshape), INT8("transpose", data_movement_int8, transpose),
    INT8("concat", data_movement_int8, concat), INT8("split", data_movement_int8, split),
    INT8("slice", data_movement_int8, slice),
};

#undef INT8
#undef OP

template <size_t N>
const VulkanKernel* find_in(const std::array<VulkanKernel, N>& kernels, std::string_view op) {
  auto it = std::find_if(kernels.begin(), kernels.end(), [&](const VulkanKernel& k) { return k.op == op; });
  return it == kernels.end() ? nullptr : &*it;
}

}  // namespace

const VulkanKernel* find_vulkan_kernel(std::string_view op) { return find_in(kKernels, op); }
std::span<const VulkanKernel> vulkan_kernels() { return kKernels; }
const VulkanKernel* find_vulkan_int8_kernel(std::string_view op) { return find_in(kInt8Kernels, op); }
std::span<const VulkanKernel> vulkan_int8_kernels() { return kInt8Kernels; }

const VulkanKernel* find_vulkan_kernel(const Graph& graph, const Node& node) {
  return is_int8_node(graph, node) ? find_vulkan_int8_kernel(node.op) : find_vulkan_kernel(node.op);
}

std::pair<double, double> activation_bounds(const Node& node) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  const double lo = attr_float(node, "act_min"), hi = attr_float(node, "act_max");
  return {lo > -kFloatMax ? lo : -kInfinity, hi < kFloatMax ? hi : kInfinity};
}

int bias_weights(NodeContext& ctx, int64_t channels) {
  if (ctx.prepacked(2)) return ctx.prepacked_weights(2);
  if (!ctx.has_input(2)) {
    const std::vector<float> zeros(static_cast<size_t>(channels), 0.0f);
    return ctx.weights(pack_channels(zeros.data(), channels));
  }
  return ctx.weights(pack_channels(ctx.constant(2), channels));
}

std::optional<std::string> require_constant(const Graph& graph, const Node& node, size_t i, const char* what) {
  if (i >= node.inputs.size() || node.inputs[i].empty()) return std::nullopt;
  if (!graph.tensor(node.inputs[i]).is_constant()) return fmt::format("{} '{}' must be a constant", what, node.inputs[i]);
  return std::nullopt;
}

}  // namespace mt::vulkan
