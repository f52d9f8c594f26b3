// Reference kernels of the norm family against hand-computed values.
#include <doctest/doctest.h>

#include <cmath>

#include "tests/unit/eval/kernel_test_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("reference batch_norm: per-channel statistics") {
  // X [2, 2, 1, 2]; channel 0: mean 1.5, var 0.25; channel 1: mean 3, var 4, scale 2, bias 1.
  HostTensor x = f32({2, 2, 1, 2}, {1, 2, 3, 4, 2, 1, 5, 1});
  HostTensor scale = f32({2}, {1, 2});
  HostTensor bias = f32({2}, {0, 1});
  HostTensor mean = f32({2}, {1.5f, 3});
  HostTensor var = f32({2}, {0.25f, 4});
  HostTensor y = run_op("batch_norm", {x, scale, bias, mean, var}, {{"epsilon", 0.0}});
  CHECK(y.shape == Shape{2, 2, 1, 2});
  // ch0: (x - 1.5) / 0.5; ch1: (x - 3) / 2 * 2 + 1 = x - 2.
  check_close(y.floats(), {-1, 1, 1, 2, 1, -1, 3, -1}, 1e-6);
  // The default epsilon (1e-5) is added to the variance.
  HostTensor y_eps = run_op("batch_norm", {x, scale, bias, mean, var});
  const float k0 = static_cast<float>(1 / std::sqrt(0.25 + 1e-5));
  const float k1 = static_cast<float>(2 / std::sqrt(4 + 1e-5));
  check_close(y_eps.floats(), {-0.5f * k0, 0.5f * k0, 1, 1 + k1, 0.5f * k0, -0.5f * k0, 1 + 2 * k1, 1 - 2 * k1}, 1e-6);
  // Rank 2: [N, C].
  check_close(run_op("batch_norm", {f32({1, 2}, {2, 5}), scale, bias, mean, var}, {{"epsilon", 0.0}}).floats(), {1, 3},
              1e-6);
}

TEST_CASE("reference layer_norm: a known row") {
  // Row [1, 2, 3, 4]: mean 2.5, biased variance 1.25.
  HostTensor x = f32({2, 4}, {1, 2, 3, 4, -1, -1, -1, -1});
  HostTensor y = run_op("layer_norm", {x}, {{"epsilon", 0.0}});
  const float a = static_cast<float>(1.5 / std::sqrt(1.25));
  const float b = static_cast<float>(0.5 / std::sqrt(1.25));
  // A constant row has zero variance: with epsilon 0 that is 0 / 0.
  auto values = y.floats();
  check_close({values.begin(), values.begin() + 4}, {-a, -b, b, a}, 1e-6);
  CHECK(std::isnan(values[4]));
  // With the default epsilon a constant row becomes zeros.
  HostTensor y_eps = run_op("layer_norm", {x});
  const float a_eps = static_cast<float>(1.5 / std::sqrt(1.25 + 1e-5));
  const float b_eps = static_cast<float>(0.5 / std::sqrt(1.25 + 1e-5));
  check_close(y_eps.floats(), {-a_eps, -b_eps, b_eps, a_eps, 0, 0, 0, 0}, 1e-6);
  // Scale and bias along the row.
  HostTensor z = run_op("layer_norm", {x, f32({4}, {1, 2, 3, 4}), f32({4}, {0, 0, 1, 1})}, {{"epsilon", 0.0}});
  auto scaled = z.floats();
  check_close({scaled.begin(), scaled.begin() + 4}, {-a, -2 * b, 3 * b + 1, 4 * a + 1}, 1e-6);
}

TEST_CASE("reference layer_norm: over the last two axes with a broadcast scale") {
  // X [2, 2, 2]; axis 1 normalises each [2, 2] block. Block 0 = [1, 2, 3, 4] as above;
  // block 1 = [0, 0, 2, 2]: mean 1, variance 1.
  HostTensor x = f32({2, 2, 2}, {1, 2, 3, 4, 0, 0, 2, 2});
  const float a = static_cast<float>(1.5 / std::sqrt(1.25));
  const float b = static_cast<float>(0.5 / std::sqrt(1.25));
  HostTensor y = run_op("layer_norm", {x}, {{"axis", int64_t{1}}, {"epsilon", 0.0}});
  check_close(y.floats(), {-a, -b, b, a, -1, -1, 1, 1}, 1e-6);
  // scale [2, 1] (one per row of the block), bias [2] (one per column) broadcast to [2, 2];
  // only a bias, with the scale absent.
  HostTensor z = run_op("layer_norm", {x, f32({2, 1}, {2, -1}), f32({2}, {10, 20})},
                        {{"axis", int64_t{-2}}, {"epsilon", 0.0}});
  check_close(z.floats(), {10 - 2 * a, 20 - 2 * b, 10 - b, 20 - a, 8, 18, 9, 19}, 1e-5);
  HostTensor only_bias = run_op("layer_norm", {x, std::nullopt, f32({1}, {5})}, {{"axis", int64_t{1}}, {"epsilon", 0.0}});
  check_close(only_bias.floats(), {5 - a, 5 - b, 5 + b, 5 + a, 4, 4, 6, 6}, 1e-6);
}
