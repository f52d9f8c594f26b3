// One line per op: the op name, its check and its planner (ops.h). The op harness and
// mt-opnames --check read this table through check_node.
#include "kernels/cpu/kernel_table.h"

#include <algorithm>
#include <array>

#include "kernels/cpu/ops.h"

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
    // binary family
    OP("add", binary),
    OP("sub", binary),
    OP("mul", binary),
    OP("div", binary),
    OP("pow", binary),
    OP("max", binary),
    OP("min", binary),
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
    OP("max_pool2d", max_pool2d),
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
    // quantization family
    OP("quantize", quantize),
    OP("dequantize", dequantize),
};

#undef OP

}  // namespace

const CpuKernel* find_cpu_kernel(std::string_view op) {
  auto it = std::find_if(kKernels.begin(), kKernels.end(), [&](const CpuKernel& k) { return k.op == op; });
  return it == kKernels.end() ? nullptr : &*it;
}

std::span<const CpuKernel> cpu_kernels() { return kKernels; }

}  // namespace mt::cpu
