// Reference kernels of the recurrent family against one-unit sequences computed here step by step
// from ONNX's equations: gru's two linear_before_reset forms, lstm's peepholes and initial states,
// rnn in reverse with sequence lengths (zero past a sequence's end).
#include <doctest/doctest.h>

#include <cmath>

#include "tests/unit/eval/kernel_test_util.h"

using namespace mt;
using namespace mt::test;

namespace {

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Attributes one_unit(const char* direction = "forward") {
  return {{"hidden_size", int64_t{1}}, {"direction", std::string(direction)}};
}

}  // namespace

TEST_CASE("reference gru: linear_before_reset 0 and 1") {
  // W (z, r, h) = 1, 2, 3; R = 0.5, -1, 2; Wb = 0.1, 0.2, 0.3; Rb = 0.4, 0.5, 0.6; X = 1, -0.5.
  const HostTensor x = f32({2, 1, 1}, {1.0f, -0.5f});
  const HostTensor w = f32({1, 3, 1}, {1, 2, 3});
  const HostTensor r = f32({1, 3, 1}, {0.5f, -1, 2});
  const HostTensor b = f32({1, 6}, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f});
  for (int64_t linear_before_reset : {0, 1}) {
    INFO("linear_before_reset ", linear_before_reset);
    std::vector<float> y;
    double h = 0;
    for (double xt : {1.0, -0.5}) {
      const double z = sigmoid(xt + 0.5 * h + 0.1 + 0.4);
      const double reset = sigmoid(2 * xt - h + 0.2 + 0.5);
      const double n = linear_before_reset != 0 ? std::tanh(3 * xt + 0.3 + reset * (2 * h + 0.6))
                                                : std::tanh(3 * xt + 2 * (reset * h) + 0.6 + 0.3);
      h = (1 - z) * n + z * h;
      y.push_back(static_cast<float>(h));
    }
    Attributes attrs = one_unit();
    attrs["linear_before_reset"] = linear_before_reset;
    const auto outputs = run_node("gru", {x, w, r, b}, attrs, 2);
    CHECK(outputs[0].shape == Shape{2, 1, 1, 1});
    check_close(outputs[0].floats(), y, 1e-6);
    check_close(outputs[1].floats(), {y.back()}, 1e-6);
  }
}

TEST_CASE("reference lstm: peepholes and initial states") {
  // W (i, o, f, c) = 1, 0.5, -1, 2; R = 0.3, -0.2, 0.1, 0.4; P (i, o, f) = 0.5, -0.5, 0.25;
  // H0 = -0.2, C0 = 0.7, X = 0.6, no bias.
  const double x = 0.6, h0 = -0.2, c0 = 0.7;
  const double i = sigmoid(1 * x + 0.3 * h0 + 0.5 * c0);
  const double f = sigmoid(-1 * x + 0.1 * h0 + 0.25 * c0);
  const double c = f * c0 + i * std::tanh(2 * x + 0.4 * h0);
  const double o = sigmoid(0.5 * x - 0.2 * h0 - 0.5 * c);
  const double h = o * std::tanh(c);
  const auto outputs = run_node(
      "lstm",
      {f32({1, 1, 1}, {0.6f}), f32({1, 4, 1}, {1, 0.5f, -1, 2}), f32({1, 4, 1}, {0.3f, -0.2f, 0.1f, 0.4f}),
       std::nullopt, std::nullopt, f32({1, 1, 1}, {-0.2f}), f32({1, 1, 1}, {0.7f}), f32({1, 3}, {0.5f, -0.5f, 0.25f})},
      one_unit(), 3);
  check_close(outputs[0].floats(), {static_cast<float>(h)}, 1e-6);
  check_close(outputs[1].floats(), {static_cast<float>(h)}, 1e-6);
  check_close(outputs[2].floats(), {static_cast<float>(c)}, 1e-6);
}

TEST_CASE("reference rnn: reverse with sequence lengths") {
  // Two sequences, W = 1, R = 0.5: [1, 2, 3] (length 3) and [0.5, -1] (length 2, then padding 9).
  const HostTensor x = f32({3, 2, 1}, {1, 0.5f, 2, -1, 3, 9});
  const auto outputs = run_node("rnn", {x, f32({1, 1, 1}, {1}), f32({1, 1, 1}, {0.5f}), std::nullopt, i32({2}, {3, 2})},
                                one_unit("reverse"), 2);
  const double a2 = std::tanh(3.0), a1 = std::tanh(2 + 0.5 * a2), a0 = std::tanh(1 + 0.5 * a1);
  const double b1 = std::tanh(-1.0), b0 = std::tanh(0.5 + 0.5 * b1);
  // Y [T, D, B, H]: step-major; the second sequence's step 2 is past its end.
  check_close(outputs[0].floats(),
              {static_cast<float>(a0), static_cast<float>(b0), static_cast<float>(a1), static_cast<float>(b1),
               static_cast<float>(a2), 0.0f},
              1e-6);
  check_close(outputs[1].floats(), {static_cast<float>(a0), static_cast<float>(b0)}, 1e-6);
}

TEST_CASE("reference rnn: a sequence length beyond X is invalid input") {
  try {
    run_node("rnn", {f32({2, 1, 1}, {1, 2}), f32({1, 1, 1}, {1}), f32({1, 1, 1}, {1}), std::nullopt, i32({1}, {3})},
             one_unit(), 2);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_input);
    CHECK(std::string(e.what()).find("sequence_lens[0] is 3, outside [0, 2]") != std::string::npos);
  }
}
