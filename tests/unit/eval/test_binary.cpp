// Reference kernels of the binary family against hand-computed values: broadcasting in every
// direction, integer semantics (truncating division, wrap-around, division by zero), add's clamp.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "tests/unit/eval/kernel_test_util.h"

using namespace mt;
using namespace mt::test;

namespace {

ExitCode error_code(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error.code();
  }
  return ExitCode::ok;
}

}  // namespace

TEST_CASE("reference binary: float32 arithmetic") {
  HostTensor a = f32({4}, {1.0f, -2.0f, 3.0f, 0.5f});
  HostTensor b = f32({4}, {2.0f, 4.0f, -1.0f, 0.25f});
  check_close(run_op("add", {a, b}).floats(), {3.0f, 2.0f, 2.0f, 0.75f}, 0);
  check_close(run_op("sub", {a, b}).floats(), {-1.0f, -6.0f, 4.0f, 0.25f}, 0);
  check_close(run_op("mul", {a, b}).floats(), {2.0f, -8.0f, -3.0f, 0.125f}, 0);
  check_close(run_op("div", {a, b}).floats(), {0.5f, -0.5f, -3.0f, 2.0f}, 0);
  check_close(run_op("pow", {a, b}).floats(), {1.0f, 16.0f, 1.0f / 3.0f, 0.8408964153f}, 1e-6);
  check_close(run_op("max", {a, b}).floats(), {2.0f, 4.0f, 3.0f, 0.5f}, 0);
  check_close(run_op("min", {a, b}).floats(), {1.0f, -2.0f, -1.0f, 0.25f}, 0);
  // Division by zero follows IEEE.
  check_close(run_op("div", {f32({2}, {1.0f, -1.0f}), f32({2}, {0.0f, 0.0f})}).floats(),
              {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}, 0);
}

TEST_CASE("reference binary: max and min propagate NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto y = run_op("max", {f32({2}, {nan, 1.0f}), f32({2}, {1.0f, nan})}).floats();
  CHECK(std::isnan(y[0]));
  CHECK(std::isnan(y[1]));
  CHECK(std::isnan(run_op("min", {f32({1}, {1.0f}), f32({1}, {nan})}).floats()[0]));
}

TEST_CASE("reference binary: broadcasting in both directions") {
  // [2,1] op [3] -> [2,3]
  HostTensor col = f32({2, 1}, {10.0f, 20.0f});
  HostTensor row = f32({3}, {1.0f, 2.0f, 3.0f});
  HostTensor sum = run_op("add", {col, row});
  CHECK(sum.shape == Shape{2, 3});
  check_close(sum.floats(), {11, 12, 13, 21, 22, 23}, 0);
  check_close(run_op("sub", {row, col}).floats(), {-9, -8, -7, -19, -18, -17}, 0);
  // Scalar with a tensor, and a per-channel [C,1,1] with an NCHW tensor.
  check_close(run_op("mul", {f32({}, {2.0f}), row}).floats(), {2, 4, 6}, 0);
  HostTensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  HostTensor per_channel = f32({2, 1, 1}, {1.0f, -1.0f});
  HostTensor product = run_op("mul", {x, per_channel});
  CHECK(product.shape == Shape{1, 2, 2, 2});
  check_close(product.floats(), {1, 2, 3, 4, -5, -6, -7, -8}, 0);
  // Both sides broadcast inside the shape: [2,1,2] op [1,3,1] -> [2,3,2].
  HostTensor p = f32({2, 1, 2}, {1, 2, 3, 4});
  HostTensor q = f32({1, 3, 1}, {0, 10, 100});
  HostTensor r = run_op("add", {p, q});
  CHECK(r.shape == Shape{2, 3, 2});
  check_close(r.floats(), {1, 2, 11, 12, 101, 102, 3, 4, 13, 14, 103, 104}, 0);
  // An empty operand gives an empty result.
  CHECK(run_op("add", {f32({0, 3}, {}), row}).shape == Shape{0, 3});
}

TEST_CASE("reference binary: add applies act_min/act_max") {
  HostTensor a = f32({4}, {-5.0f, 1.0f, 4.0f, 9.0f});
  HostTensor b = f32({}, {1.0f});
  check_close(run_op("add", {a, b}, {{"act_min", 0.0}, {"act_max", 6.0}}).floats(), {0.0f, 2.0f, 5.0f, 6.0f}, 0);
  check_close(run_op("add", {a, b}, {{"act_min", 0.0}}).floats(), {0.0f, 2.0f, 5.0f, 10.0f}, 0);
  check_close(run_op("add", {a, b}).floats(), {-4.0f, 2.0f, 5.0f, 10.0f}, 0);
  // A fused relu (act_min 0, act_max left at FLT_MAX) keeps an overflow infinite, as relu would.
  const float big = std::numeric_limits<float>::max();
  check_close(run_op("add", {f32({1}, {big}), f32({1}, {big})}, {{"act_min", 0.0}}).floats(),
              {std::numeric_limits<float>::infinity()}, 0);
}

TEST_CASE("reference binary: int64 and int32 arithmetic") {
  HostTensor a = i64({4}, {7, -7, 7, -7});
  HostTensor b = i64({4}, {2, 2, -2, -2});
  CHECK(run_op("add", {a, b}).values<int64_t>() == std::vector<int64_t>{9, -5, 5, -9});
  CHECK(run_op("sub", {a, b}).values<int64_t>() == std::vector<int64_t>{5, -9, 9, -5});
  CHECK(run_op("mul", {a, b}).values<int64_t>() == std::vector<int64_t>{14, -14, -14, 14});
  // ONNX integer Div truncates toward zero (not floor).
  CHECK(run_op("div", {a, b}).values<int64_t>() == std::vector<int64_t>{3, -3, -3, 3});
  CHECK(run_op("max", {a, b}).values<int64_t>() == std::vector<int64_t>{7, 2, 7, -2});
  CHECK(run_op("min", {a, b}).values<int64_t>() == std::vector<int64_t>{2, -7, -2, -7});
  // Broadcast a scalar, as shape arithmetic does.
  CHECK(run_op("mul", {i32({3}, {1, 2, 3}), i32({}, {4})}).values<int32_t>() == std::vector<int32_t>{4, 8, 12});
  CHECK(run_op("div", {i32({2}, {-9, 9}), i32({}, {4})}).values<int32_t>() == std::vector<int32_t>{-2, 2});
}

TEST_CASE("reference binary: integer overflow wraps and division by zero is an error") {
  const int64_t max = std::numeric_limits<int64_t>::max();
  const int64_t min = std::numeric_limits<int64_t>::min();
  CHECK(run_op("add", {i64({1}, {max}), i64({1}, {1})}).values<int64_t>() == std::vector<int64_t>{min});
  CHECK(run_op("div", {i64({1}, {min}), i64({1}, {-1})}).values<int64_t>() == std::vector<int64_t>{min});
  CHECK(run_op("div", {i64({2}, {6, 5}), i64({2}, {-1, -1})}).values<int64_t>() == std::vector<int64_t>{-6, -5});
  CHECK(error_code([] { run_op("div", {i64({2}, {1, 2}), i64({2}, {1, 0})}); }) == ExitCode::invalid_input);
  CHECK(error_code([] { run_op("div", {i32({1}, {1}), i32({1}, {0})}); }) == ExitCode::invalid_input);
}

TEST_CASE("reference binary: unsupported dtypes and attributes") {
  CHECK(error_code([] { run_op("add", {i64({1}, {2}), i64({1}, {3})}, {{"act_min", 0.0}}); }) ==
        ExitCode::unsupported);
  HostTensor f16 = HostTensor::of<uint16_t>(DType::f16, {1}, {0x3c00});
  CHECK(error_code([&] { run_op("add", {f16, f16}); }) == ExitCode::unsupported);
}
