// Reference kernels of the index family (and top_k) against ONNX's documented examples, and their refusal of
// out-of-range indices in data (never an out-of-bounds access).
#include <doctest/doctest.h>

#include <limits>
#include <numeric>
#include <string>

#include "tests/unit/eval/kernel_test_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

HostTensor iota_f32(Shape shape) {
  std::vector<float> values(static_cast<size_t>(numel(shape)));
  std::iota(values.begin(), values.end(), 0.0f);
  return f32(std::move(shape), values);
}

// Runs `op` and checks that it fails with invalid_input and a message containing `fragment`.
void check_index_error(const std::string& op, const std::vector<std::optional<HostTensor>>& inputs,
                       const Attributes& attrs, const std::string& fragment) {
  try {
    run_op(op, inputs, attrs);
    FAIL("expected an error");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::invalid_input);
    INFO("message: ", error.what());
    CHECK(std::string(error.what()).find(fragment) != std::string::npos);
  }
}

TEST_CASE("trilu: both triangles, k from the input, k beyond the matrix") {
  const HostTensor x = iota_f32({3, 3});
  CHECK(run_op("trilu", {x}).floats() == Floats{0, 1, 2, 0, 4, 5, 0, 0, 8});
  CHECK(run_op("trilu", {x, i64({}, {1})}).floats() == Floats{0, 1, 2, 0, 0, 5, 0, 0, 0});
  CHECK(run_op("trilu", {x, i64({}, {-1})}, {{"upper", int64_t{0}}}).floats() == Floats{0, 0, 0, 3, 0, 0, 6, 7, 0});
  CHECK(run_op("trilu", {x, i64({}, {100})}, {{"upper", int64_t{0}}}).floats() == x.floats());
  CHECK(run_op("trilu", {x, i64({}, {-100})}, {{"upper", int64_t{0}}}).floats() == Floats(9, 0.0f));
  // Batched, non-square: each 2x3 matrix separately.
  CHECK(run_op("trilu", {iota_f32({2, 2, 3})}, {{"upper", int64_t{0}}}).floats() ==
        Floats{0, 0, 0, 3, 4, 0, 6, 0, 0, 9, 10, 0});
}

TEST_CASE("tile: repeats per axis") {
  const HostTensor out = run_op("tile", {f32({2, 2}, {1, 2, 3, 4})}, {{"repeats", Ints{2, 2}}});
  CHECK(out.shape == Shape{4, 4});
  CHECK(out.floats() == Floats{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
}

TEST_CASE("gather_elements: ONNX's examples, negative indices") {
  CHECK(run_op("gather_elements", {f32({2, 2}, {1, 2, 3, 4}), i64({2, 2}, {0, 0, 1, 0})}, {{"axis", int64_t{1}}})
            .floats() == Floats{1, 1, 4, 3});
  const HostTensor data = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(run_op("gather_elements", {data, i64({2, 3}, {1, 2, 0, 2, 0, 0})}).floats() == Floats{4, 8, 3, 7, 2, 3});
  CHECK(run_op("gather_elements", {data, i32({2, 3}, {-1, -2, 0, -2, 0, 0})}).floats() == Floats{7, 5, 3, 4, 2, 3});
  check_index_error("gather_elements", {data, i64({1, 1}, {3})}, {},
                    "index 3 (element 0 of the indices) is out of range for axis 0 of size 3");
  check_index_error("gather_elements", {data, i64({1, 2}, {0, -4})}, {{"axis", int64_t{1}}}, "index -4");
}

TEST_CASE("scatter_elements: ONNX's examples, reductions, bad indices") {
  const HostTensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  const HostTensor updates = f32({1, 2}, {1.1f, 2.1f});
  const Attributes axis1{{"axis", int64_t{1}}};
  CHECK(run_op("scatter_elements", {data, i64({1, 2}, {1, 3}), updates}, axis1).floats() ==
        Floats{1, 1.1f, 3, 2.1f, 5});
  CHECK(run_op("scatter_elements", {data, i64({1, 2}, {1, -3}), updates}, axis1).floats() ==
        Floats{1, 1.1f, 2.1f, 4, 5});
  const Attributes add{{"axis", int64_t{1}}, {"reduction", std::string("add")}};
  check_close(run_op("scatter_elements", {data, i64({1, 2}, {1, 1}), updates}, add).floats(), {1, 5.2f, 3, 4, 5}, 1e-6);
  const Attributes mul{{"axis", int64_t{1}}, {"reduction", std::string("mul")}};
  check_close(run_op("scatter_elements", {data, i64({1, 2}, {4, 4}), updates}, mul).floats(),
              {1, 2, 3, 4, 5 * 1.1f * 2.1f}, 1e-5);
  const Attributes max{{"axis", int64_t{1}}, {"reduction", std::string("max")}};
  CHECK(run_op("scatter_elements", {data, i64({1, 2}, {0, 4}), updates}, max).floats() == Floats{1.1f, 2, 3, 4, 5});
  check_index_error("scatter_elements", {data, i64({1, 2}, {1, 5}), updates}, axis1, "index 5");
}

TEST_CASE("gather_nd: ONNX's examples, batch_dims") {
  CHECK(run_op("gather_nd", {i32({2, 2}, {0, 1, 2, 3}), i64({2, 2}, {0, 0, 1, 1})}).values<int32_t>() ==
        std::vector<int32_t>{0, 3});
  const HostTensor data = iota_f32({2, 2, 2});
  const HostTensor slices = run_op("gather_nd", {data, i64({2, 1, 2}, {0, 1, 1, 0})});
  CHECK(slices.shape == Shape{2, 1, 2});
  CHECK(slices.floats() == Floats{2, 3, 4, 5});
  const HostTensor batched = run_op("gather_nd", {data, i64({2, 1}, {1, 0})}, {{"batch_dims", int64_t{1}}});
  CHECK(batched.shape == Shape{2, 2});
  CHECK(batched.floats() == Floats{2, 3, 4, 5});
  check_index_error("gather_nd", {data, i64({1, 2}, {0, 2})}, {},
                    "index 2 (element 1 of the indices) is out of range for axis 1");
}

TEST_CASE("scatter_nd: ONNX's examples, reductions, bad indices") {
  const HostTensor data = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const HostTensor indices = i64({4, 1}, {4, 3, 1, 7});
  const HostTensor updates = f32({4}, {9, 10, 11, 12});
  CHECK(run_op("scatter_nd", {data, indices, updates}).floats() == Floats{1, 11, 3, 10, 9, 6, 7, 12});
  CHECK(run_op("scatter_nd", {data, i64({2, 1}, {0, 0}), f32({2}, {5, 6})}, {{"reduction", std::string("add")}})
            .floats() == Floats{12, 2, 3, 4, 5, 6, 7, 8});
  // Whole rows of a 2-D tensor, negative index.
  CHECK(run_op("scatter_nd", {iota_f32({3, 2}), i64({1, 1}, {-1}), f32({1, 2}, {9, 9})}).floats() ==
        Floats{0, 1, 2, 3, 9, 9});
  check_index_error("scatter_nd", {data, i64({1, 1}, {8}), f32({1}, {0})}, {}, "index 8");
}

TEST_CASE("one_hot: axes, negative indices, out-of-range indices give off values") {
  const HostTensor values = f32({2}, {0, 5});
  const HostTensor last = run_op("one_hot", {i64({3}, {1, -1, 3}), values}, {{"depth", int64_t{3}}});
  CHECK(last.shape == Shape{3, 3});
  CHECK(last.floats() == Floats{0, 5, 0, 0, 0, 5, 0, 0, 0});
  const HostTensor first =
      run_op("one_hot", {f32({2}, {0.7f, 2.2f}), values}, {{"depth", int64_t{3}}, {"axis", int64_t{0}}});
  CHECK(first.shape == Shape{3, 2});
  CHECK(first.floats() == Floats{5, 0, 0, 0, 0, 5});
}

TEST_CASE("top_k: largest and smallest, ties by index, NaN ranks highest") {
  const HostTensor x = f32({2, 4}, {1, 4, 4, 2, 0, -1, 7, 3});
  const auto largest = run_node("top_k", {x}, {{"k", int64_t{3}}}, 2);
  CHECK(largest[0].floats() == Floats{4, 4, 2, 7, 3, 0});
  CHECK(largest[1].values<int64_t>() == Ints{1, 2, 3, 2, 3, 0});
  const auto smallest = run_node("top_k", {x}, {{"k", int64_t{1}}, {"axis", int64_t{0}}, {"largest", int64_t{0}}}, 2);
  CHECK(smallest[0].floats() == Floats{0, -1, 4, 2});
  CHECK(smallest[1].values<int64_t>() == Ints{1, 1, 0, 0});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto with_nan = run_node("top_k", {f32({3}, {1, nan, 2})}, {{"k", int64_t{2}}}, 2);
  CHECK(with_nan[1].values<int64_t>() == Ints{1, 2});
}

}  // namespace
}  // namespace mt::test
