// One line per op: the op name, its check and its planner (ops.h). The op harness and
// mt-opnames --check read this table through check_node; the op table's cpu and cpu_int8 columns
// (lib/ops/op_table.inc) must name the same ops (tests/unit/ops/test_op_table.cpp).
#include "kernels/cpu/plan/kernel_table.h"

#include <algorithm>
#include <array>

#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/ops/ops_int8.h"

namespace mt::cpu {
namespace {

#define OP(name, fn) CpuKernel{name, check_##fn, plan_##fn}

constexpr std::array kKernels{
    // activation family
    OP("relu", relu),
    OP("clamp", clamp),
    OP("sigmoid", sigmoid),
    OP("hardswish", hardswish),
    OP("leaky_relu", leaky_relu),
    OP("elu", elu),
    OP("sqrt", sqrt),
    OP("neg", neg),
    OP("abs", abs),
    OP("floor", floor),
    OP("ceil", ceil),
    OP("prelu", prelu),
    OP("tanh", tanh),
    OP("silu", silu),
    OP("erf", erf),
    OP("exp", exp),
    OP("log", log),
    OP("reciprocal", reciprocal),
    OP("softplus", softplus),
    OP("gelu", gelu),
    OP("hardsigmoid", hardsigmoid),
    OP("cast", cast),
    OP("cos", unary_math),
    OP("sin", unary_math),
    OP("tan", unary_math),
    OP("acos", unary_math),
    OP("asin", unary_math),
    OP("atan", unary_math),
    OP("cosh", unary_math),
    OP("sinh", unary_math),
    OP("asinh", unary_math),
    OP("acosh", unary_math),
    OP("atanh", unary_math),
    OP("softsign", unary_math),
    OP("sign", unary_math),
    OP("round", unary_math),
    OP("selu", unary_math),
    OP("celu", unary_math),
    OP("thresholded_relu", unary_math),
    OP("shrink", unary_math),
    // binary family
    OP("add", binary),
    OP("sub", binary),
    OP("mul", binary),
    OP("div", binary),
    OP("pow", binary),
    OP("max", binary),
    OP("min", binary),
    OP("mod", binary),
    OP("bit_shift", binary),
    // logic family
    OP("equal", compare),
    OP("less", compare),
    OP("less_or_equal", compare),
    OP("greater", compare),
    OP("greater_or_equal", compare),
    OP("logical_and", logical),
    OP("logical_or", logical),
    OP("logical_xor", logical),
    OP("logical_not", logical),
    OP("is_nan", classify),
    OP("is_inf", classify),
    OP("where", where),
    // reduce family
    OP("reduce_mean", reduce),
    OP("reduce_sum", reduce),
    OP("reduce_max", reduce),
    OP("reduce_min", reduce),
    OP("softmax", softmax),
    OP("log_softmax", softmax),
    OP("reduce_l1", reduce),
    OP("reduce_l2", reduce),
    OP("reduce_sum_square", reduce),
    OP("reduce_prod", reduce),
    OP("reduce_log_sum", reduce),
    OP("reduce_log_sum_exp", reduce),
    OP("hardmax", hardmax),
    OP("argmax", arg_extreme),
    OP("argmin", arg_extreme),
    OP("cumsum", cumsum),
    OP("top_k", top_k),
    // norm family
    OP("batch_norm", batch_norm),
    OP("layer_norm", layer_norm),
    OP("lrn", lrn),
    // linear family
    OP("linear", linear),
    OP("matmul", matmul),
    OP("det", det),
    // conv family
    OP("conv2d", conv2d),
    OP("conv_transpose2d", conv_transpose2d),
    // pool family
    OP("max_pool2d", max_pool2d),
    OP("max_pool2d_indices", max_pool2d_indices),
    OP("avg_pool2d", avg_pool2d),
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
    OP("gather", gather),
    OP("expand", expand),
    // index family
    OP("trilu", trilu),
    OP("tile", tile),
    OP("gather_elements", gather_elements),
    OP("gather_nd", gather_nd),
    OP("scatter_elements", scatter_elements),
    OP("scatter_nd", scatter_nd),
    OP("one_hot", one_hot),
    OP("non_max_suppression", non_max_suppression),
    // sample family
    OP("grid_sample", grid_sample),
    OP("roi_align", roi_align),
    OP("max_unpool", max_unpool),
    // signal family
    OP("dft", dft),
    OP("reverse_sequence", reverse_sequence),
    // quantization family
    OP("quantize", quantize),
    OP("dequantize", dequantize),
    // recurrent family
    OP("rnn", recurrent),
    OP("gru", recurrent),
    OP("lstm", recurrent),
};

// Nodes whose first input is int8 (lib/quant's scheme): ops_int8.h.
#define INT8(name, fn) CpuKernel{name, check_##fn##_int8, plan_##fn##_int8}

constexpr std::array kInt8Kernels{
    INT8("conv2d", conv2d),
    INT8("linear", linear),
    INT8("add", add),
    INT8("mul", mul),
    INT8("max_pool2d", max_pool2d),
    INT8("avg_pool2d", avg_pool2d),
    INT8("global_avg_pool", global_avg_pool),
    INT8("sigmoid", sigmoid),
    INT8("hardswish", hardswish),
    INT8("silu", silu),
    INT8("hardsigmoid", hardsigmoid),
    INT8("reshape", data_movement),
    INT8("flatten", data_movement),
    INT8("squeeze", data_movement),
    INT8("unsqueeze", data_movement),
    INT8("identity", data_movement),
    INT8("transpose", data_movement),
    INT8("concat", data_movement),
    INT8("split", data_movement),
    INT8("slice", data_movement),
};

#undef INT8
#undef OP

template <size_t N>
const CpuKernel* find_in(const std::array<CpuKernel, N>& kernels, std::string_view op) {
  auto it = std::find_if(kernels.begin(), kernels.end(), [&](const CpuKernel& k) { return k.op == op; });
  return it == kernels.end() ? nullptr : &*it;
}

}  // namespace

const CpuKernel* find_cpu_kernel(std::string_view op) { return find_in(kKernels, op); }

bool is_int8_node(const Graph& graph, const Node& node) {
  if (node.op == "dequantize" || node.inputs.empty() || node.inputs[0].empty()) return false;
  const TensorInfo& input = graph.tensor(node.inputs[0]);
  return input.dtype == DType::i8 && input.quant.has_value();
}

const CpuKernel* find_cpu_kernel(const Graph& graph, const Node& node) {
  return is_int8_node(graph, node) ? find_in(kInt8Kernels, node.op) : find_in(kKernels, node.op);
}

std::span<const CpuKernel> cpu_kernels() { return kKernels; }
std::span<const CpuKernel> cpu_int8_kernels() { return kInt8Kernels; }

}  // namespace mt::cpu
