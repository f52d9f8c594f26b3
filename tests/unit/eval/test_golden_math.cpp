// Reference kernels of the activation, binary, reduce, norm and linear families against
// PyTorch outputs stored in golden_math.inc (regenerate with scripts/gen_reference_goldens_math.py).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tests/unit/eval/kernel_test_util.h"

namespace {

using namespace mt;
using namespace mt::test;

#include "tests/unit/eval/golden_math.inc"

namespace g = golden_math;

// PyTorch computes in float32 and the reference in double, so they agree to a few float ulps:
// |actual - expected| <= tolerance * max(1, |expected|).
void check_golden(const HostTensor& actual, const HostTensor& expected, double tolerance = 2e-6) {
  CHECK(actual.shape == expected.shape);
  const std::vector<float> values = actual.floats(), expected_values = expected.floats();
  REQUIRE(values.size() == expected_values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double e = expected_values[i];
    INFO("element ", i, ": got ", values[i], ", PyTorch ", e);
    CHECK(std::abs(values[i] - e) <= tolerance * std::max(1.0, std::abs(e)));
  }
}

}  // namespace

TEST_CASE("golden: unary activations match PyTorch") {
  const HostTensor x = g::unary_x;
  check_golden(run_op("relu", {x}), g::relu);
  check_golden(run_op("sigmoid", {x}), g::sigmoid);
  check_golden(run_op("tanh", {x}), g::tanh);
  check_golden(run_op("hardswish", {x}), g::hardswish);
  check_golden(run_op("silu", {x}), g::silu);
  check_golden(run_op("erf", {x}), g::erf);
  check_golden(run_op("exp", {x}), g::exp);
  check_golden(run_op("gelu", {x}), g::gelu);
  check_golden(run_op("gelu", {x}, {{"approximate", std::string("tanh")}}), g::gelu_tanh);
  check_golden(run_op("softplus", {x}), g::softplus);
  check_golden(run_op("elu", {x}), g::elu);
  check_golden(run_op("leaky_relu", {x}), g::leaky_relu);
  check_golden(run_op("hardsigmoid", {x}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}}), g::hardsigmoid);
  check_golden(run_op("clamp", {x}, {{"min", -2.0}, {"max", 3.0}}), g::hardtanh);
  const HostTensor p = g::positive_x;
  check_golden(run_op("log", {p}), g::log);
  check_golden(run_op("sqrt", {p}), g::sqrt);
  check_golden(run_op("reciprocal", {p}), g::reciprocal);
  check_golden(run_op("prelu", {g::prelu_x, g::prelu_slope}), g::prelu);
}

TEST_CASE("golden: broadcast binary ops match PyTorch") {
  check_golden(run_op("pow", {g::binary_a, g::binary_b}), g::pow);
  check_golden(run_op("div", {g::binary_a, g::binary_b}), g::div);
  check_golden(run_op("max", {g::binary_a, g::binary_b}), g::maximum);
}

TEST_CASE("golden: reductions and softmax match PyTorch") {
  const HostTensor x = g::reduce_x;
  auto axes = [](std::vector<int64_t> list, int64_t keepdims) {
    return Attributes{{"axes", std::move(list)}, {"keepdims", keepdims}};
  };
  check_golden(run_op("reduce_mean", {x}, axes({0, 2}, 1)), g::reduce_mean_0_2_keep);
  check_golden(run_op("reduce_sum", {x}, axes({1}, 0)), g::reduce_sum_1);
  check_golden(run_op("reduce_max", {x}, axes({1, 2}, 0)), g::reduce_max_1_2);
  check_golden(run_op("reduce_min", {x}, axes({}, 0)), g::reduce_min_all);
  check_golden(run_op("softmax", {x}, {{"axis", int64_t{1}}}), g::softmax_1);
  check_golden(run_op("log_softmax", {x}), g::log_softmax_last);
}

TEST_CASE("golden: layer_norm and batch_norm match PyTorch") {
  check_golden(run_op("layer_norm", {g::layer_norm_x, g::layer_norm_scale, g::layer_norm_bias}, {{"axis", int64_t{1}}}),
               g::layer_norm_axis1, 1e-5);
  check_golden(run_op("batch_norm", {g::batch_norm_x, g::batch_norm_scale, g::batch_norm_bias, g::batch_norm_mean,
                                     g::batch_norm_var}),
               g::batch_norm, 1e-5);
}

TEST_CASE("golden: linear and matmul match PyTorch") {
  check_golden(run_op("linear", {g::linear_x, g::linear_w, g::linear_b}), g::linear, 1e-5);
  check_golden(run_op("matmul", {g::matmul_a, g::matmul_b}), g::matmul, 1e-5);
}
