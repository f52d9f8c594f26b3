// Reference kernels of the shape family, against hand-computed results, on float32, int64
// and one-byte dtypes (they copy elements without looking at them).
#include <doctest/doctest.h>

#include <limits>
#include <numeric>

#include "tests/unit/eval/kernel_test_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;

// 0, 1, 2, ... as float32 of `shape`.
HostTensor iota_f32(Shape shape) {
  std::vector<float> values(static_cast<size_t>(numel(shape)));
  std::iota(values.begin(), values.end(), 0.0f);
  return f32(std::move(shape), values);
}
HostTensor iota_i64(Shape shape) {
  std::vector<int64_t> values(static_cast<size_t>(numel(shape)));
  std::iota(values.begin(), values.end(), int64_t{0});
  return i64(std::move(shape), values);
}

TEST_CASE("reshape, flatten, squeeze, unsqueeze and identity keep the element order") {
  const HostTensor x = iota_i64({2, 3});
  const Ints expected{0, 1, 2, 3, 4, 5};
  auto check = [&](const HostTensor& out, Shape shape) {
    CHECK(out.dtype == DType::i64);
    CHECK(out.shape == shape);
    CHECK(out.values<int64_t>() == expected);
  };
  check(run_op("reshape", {x}, {{"shape", Ints{3, 1, 2}}}), {3, 1, 2});
  check(run_op("flatten", {x}, {{"axis", int64_t{0}}}), {1, 6});
  check(run_op("unsqueeze", {x}, {{"axes", Ints{0, 3}}}), {1, 2, 3, 1});
  check(run_op("squeeze", {i64({1, 2, 1, 3}, expected)}), {2, 3});
  check(run_op("identity", {x}), {2, 3});
}

TEST_CASE("transpose") {
  // x[i][j][k] = 12i + 4j + k, shape 2x3x4; perm (2, 0, 1) gives y[k][i][j].
  const HostTensor y = run_op("transpose", {iota_f32({2, 3, 4})}, {{"perm", Ints{2, 0, 1}}});
  REQUIRE(y.shape == Shape{4, 2, 3});
  std::vector<float> expected;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) expected.push_back(static_cast<float>(12 * i + 4 * j + k));
  CHECK(y.floats() == expected);
  // Empty perm reverses: a 2x3 matrix is transposed.
  CHECK(run_op("transpose", {iota_i64({2, 3})}).values<int64_t>() == Ints{0, 3, 1, 4, 2, 5});
  // Rank 0 and an empty tensor.
  CHECK(run_op("transpose", {f32({}, {7})}).floats() == std::vector<float>{7});
  CHECK(run_op("transpose", {f32({0, 2}, {})}).shape == Shape{2, 0});
}

TEST_CASE("slice with steps, negative indices and clamping") {
  const HostTensor x = iota_i64({4, 5});  // x[i][j] = 5i + j
  auto slice = [&](Ints starts, Ints ends, Ints axes, Ints steps) {
    return run_op("slice", {x}, {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}})
        .values<int64_t>();
  };
  CHECK(slice({1, 1}, {3, 4}, {}, {}) == Ints{6, 7, 8, 11, 12, 13});
  CHECK(slice({-1}, {std::numeric_limits<int64_t>::min()}, {0}, {-2}) == Ints{15, 16, 17, 18, 19, 5, 6, 7, 8, 9});
  CHECK(slice({0, 4}, {100, -100}, {0, 1}, {3, -3}) == Ints{4, 1, 19, 16});
  CHECK(slice({2}, {std::numeric_limits<int64_t>::max()}, {-1}, {std::numeric_limits<int64_t>::max()}) ==
        Ints{2, 7, 12, 17});
  CHECK(slice({3}, {1}, {1}, {}).empty());
  // One-byte elements.
  const HostTensor bytes = HostTensor::of<int8_t>(DType::i8, {6}, {10, 11, 12, 13, 14, 15});
  CHECK(run_op("slice", {bytes}, {{"starts", Ints{4}}, {"ends", Ints{0}}, {"steps", Ints{-2}}}).values<int8_t>() ==
        std::vector<int8_t>{14, 12});
}

TEST_CASE("expand broadcasts") {
  const HostTensor y = run_op("expand", {f32({3, 1}, {1, 2, 3})}, {{"shape", Ints{2, 1, 2}}});
  CHECK(y.shape == Shape{2, 3, 2});
  CHECK(y.floats() == std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  CHECK(run_op("expand", {i64({}, {9})}, {{"shape", Ints{3}}}).values<int64_t>() == Ints{9, 9, 9});
}

TEST_CASE("concat along inner and outer axes") {
  const HostTensor a = f32({2, 2}, {1, 2, 3, 4});
  const HostTensor b = f32({2, 1}, {5, 6});
  const HostTensor empty = f32({2, 0}, {});
  CHECK(run_op("concat", {a, empty, b}, {{"axis", int64_t{1}}}).floats() == std::vector<float>{1, 2, 5, 3, 4, 6});
  CHECK(run_op("concat", {a, f32({1, 2}, {7, 8})}, {{"axis", int64_t{-2}}}).floats() ==
        std::vector<float>{1, 2, 3, 4, 7, 8});
  CHECK(run_op("concat", {i64({1}, {3}), i64({2}, {4, 5})}, {{"axis", int64_t{0}}}).values<int64_t>() == Ints{3, 4, 5});
}

TEST_CASE("split is the inverse of concat") {
  const HostTensor x = iota_f32({2, 5});
  const auto outs = run_node("split", {x}, {{"axis", int64_t{1}}, {"split", Ints{2, 0, 3}}}, 3);
  REQUIRE(outs.size() == 3);
  CHECK(outs[0].floats() == std::vector<float>{0, 1, 5, 6});
  CHECK(outs[1].shape == Shape{2, 0});
  CHECK(outs[2].floats() == std::vector<float>{2, 3, 4, 7, 8, 9});
  const auto rows = run_node("split", {iota_i64({3, 2})}, {{"split", Ints{1, 2}}}, 2);
  CHECK(rows[0].values<int64_t>() == Ints{0, 1});
  CHECK(rows[1].values<int64_t>() == Ints{2, 3, 4, 5});
}

TEST_CASE("gather with negative indices, int32 indices and an inner axis") {
  const HostTensor data = iota_f32({3, 4});  // data[i][j] = 4i + j
  const HostTensor rows = run_op("gather", {data, i64({2, 2}, {2, 0, -1, 1})});
  CHECK(rows.shape == Shape{2, 2, 4});
  CHECK(rows.floats() == std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7});
  const HostTensor columns = run_op("gather", {data, i32({2}, {3, -4})}, {{"axis", int64_t{1}}});
  CHECK(columns.shape == Shape{3, 2});
  CHECK(columns.floats() == std::vector<float>{3, 0, 7, 4, 11, 8});
  const HostTensor scalar = run_op("gather", {iota_i64({5}), i64({}, {-2})});
  CHECK(scalar.shape == Shape{});
  CHECK(scalar.values<int64_t>() == Ints{3});
}

TEST_CASE("gather rejects out-of-range runtime indices") {
  try {
    run_op("gather", {iota_f32({3, 4}), i64({1}, {3})});
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::invalid_input);
    CHECK(std::string(error.what()).find("index 3 is out of range for axis 0 of size 3") != std::string::npos);
  }
}

}  // namespace
}  // namespace mt::test
