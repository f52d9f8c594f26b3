// Shape inference of the shape family: output shapes and dtypes, and every rejected input.
#include <doctest/doctest.h>

#include <limits>

#include "tests/unit/ops/infer_node_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

TEST_CASE("reshape keeps the element count and the dtype") {
  auto out = infer("reshape", {tensor({2, 3, 4}, DType::i64)}, {{"shape", Ints{4, 6}}});
  CHECK(out[0].shape == Shape{4, 6});
  CHECK(out[0].dtype == DType::i64);
  CHECK(infer_shape("reshape", {tensor({0, 3})}, {{"shape", Ints{3, 0, 5}}}) == Shape{3, 0, 5});
  CHECK(infer_shape("reshape", {tensor({1})}, {{"shape", Ints{}}}) == Shape{});
  MT_CHECK_INFER_FAILS("cannot reshape 2x3 (6 elements) to 4x2", "reshape", {tensor({2, 3})}, {{"shape", Ints{4, 2}}});
  MT_CHECK_INFER_FAILS("negative dimension -1", "reshape", {tensor({2, 3})}, {{"shape", Ints{-1, 3}}});
  MT_CHECK_INFER_FAILS("too large", "reshape", {tensor({2, 3})}, {{"shape", Ints{1 << 30, 1 << 30, 1 << 30}}});
  MT_CHECK_INFER_FAILS("missing required attribute 'shape'", "reshape", {tensor({2, 3})});
  MT_CHECK_INFER_FAILS("must be ints", "reshape", {tensor({2, 3})}, {{"shape", int64_t{6}}});
}

TEST_CASE("flatten splits the dims at axis") {
  CHECK(infer_shape("flatten", {tensor({2, 3, 4, 5})}) == Shape{2, 60});
  CHECK(infer_shape("flatten", {tensor({2, 3, 4, 5})}, {{"axis", int64_t{0}}}) == Shape{1, 120});
  CHECK(infer_shape("flatten", {tensor({2, 3, 4, 5})}, {{"axis", int64_t{4}}}) == Shape{120, 1});
  CHECK(infer_shape("flatten", {tensor({2, 3, 4, 5})}, {{"axis", int64_t{-1}}}) == Shape{24, 5});
  CHECK(infer_shape("flatten", {tensor({0, 3})}) == Shape{0, 3});
  MT_CHECK_INFER_FAILS("axis 5 is out of range for rank 4", "flatten", {tensor({2, 3, 4, 5})}, {{"axis", int64_t{5}}});
  MT_CHECK_INFER_FAILS("axis -5 is out of range", "flatten", {tensor({2, 3, 4, 5})}, {{"axis", int64_t{-5}}});
}

TEST_CASE("transpose permutes dims, empty perm reverses") {
  CHECK(infer_shape("transpose", {tensor({2, 3, 4})}) == Shape{4, 3, 2});
  CHECK(infer_shape("transpose", {tensor({2, 3, 4, 5})}, {{"perm", Ints{0, 2, 3, 1}}}) == Shape{2, 4, 5, 3});
  CHECK(infer_shape("transpose", {tensor({})}) == Shape{});
  MT_CHECK_INFER_FAILS("perm has 2 values for an input of rank 3", "transpose", {tensor({2, 3, 4})},
                       {{"perm", Ints{1, 0}}});
  MT_CHECK_INFER_FAILS("not a permutation", "transpose", {tensor({2, 3, 4})}, {{"perm", Ints{0, 1, 1}}});
  MT_CHECK_INFER_FAILS("not a permutation", "transpose", {tensor({2, 3, 4})}, {{"perm", Ints{0, 1, 3}}});
  MT_CHECK_INFER_FAILS("not a permutation", "transpose", {tensor({2, 3, 4})}, {{"perm", Ints{0, -1, 2}}});
}

TEST_CASE("concat sums the axis and checks the other dims") {
  CHECK(infer_shape("concat", {tensor({2, 3}), tensor({2, 5}), tensor({2, 0})}, {{"axis", int64_t{1}}}) == Shape{2, 8});
  CHECK(infer_shape("concat", {tensor({2, 3})}, {{"axis", int64_t{-2}}}) == Shape{2, 3});
  auto out = infer("concat", {tensor({1}, DType::i64), tensor({3}, DType::i64)}, {{"axis", int64_t{0}}});
  CHECK(out[0].shape == Shape{4});
  CHECK(out[0].dtype == DType::i64);
  MT_CHECK_INFER_FAILS("disagrees", "concat", {tensor({2, 3}), tensor({3, 3})}, {{"axis", int64_t{1}}});
  MT_CHECK_INFER_FAILS("has rank 1, input 0 has rank 2", "concat", {tensor({2, 3}), tensor({3})},
                       {{"axis", int64_t{0}}});
  MT_CHECK_INFER_FAILS("is int64, input 0 is float32", "concat", {tensor({2}), tensor({2}, DType::i64)},
                       {{"axis", int64_t{0}}});
  MT_CHECK_INFER_FAILS("axis 2 is out of range for rank 2", "concat", {tensor({2, 3})}, {{"axis", int64_t{2}}});
  MT_CHECK_INFER_FAILS("missing required attribute 'axis'", "concat", {tensor({2, 3})});
  MT_CHECK_INFER_FAILS("expects at least 1 inputs", "concat", {}, {{"axis", int64_t{0}}});
  MT_CHECK_INFER_FAILS("too large", "concat", {tensor({int64_t{1} << 40}), tensor({int64_t{1} << 40})},
                       {{"axis", int64_t{0}}});
}

TEST_CASE("split makes one output per size") {
  auto out = infer("split", {tensor({2, 10})}, {{"axis", int64_t{1}}, {"split", Ints{3, 0, 7}}}, 3);
  REQUIRE(out.size() == 3);
  CHECK(out[0].shape == Shape{2, 3});
  CHECK(out[1].shape == Shape{2, 0});
  CHECK(out[2].shape == Shape{2, 7});
  CHECK(infer("split", {tensor({6, 2})}, {{"axis", int64_t{-2}}, {"split", Ints{6}}})[0].shape == Shape{6, 2});
  MT_CHECK_INFER_FAILS("do not sum to dimension 10", "split", {tensor({2, 10})},
                       {{"axis", int64_t{1}}, {"split", Ints{3, 6}}}, 2);
  MT_CHECK_INFER_FAILS("do not sum to dimension 10", "split", {tensor({2, 10})},
                       {{"axis", int64_t{1}}, {"split", Ints{kInt64Max, kInt64Max}}}, 2);
  MT_CHECK_INFER_FAILS("split size -2 is negative", "split", {tensor({2, 10})},
                       {{"axis", int64_t{1}}, {"split", Ints{12, -2}}}, 2);
  MT_CHECK_INFER_FAILS("'split' is empty", "split", {tensor({2, 10})}, {{"split", Ints{}}}, 0);
  MT_CHECK_INFER_FAILS("produces 2 outputs, the node lists 3", "split", {tensor({2, 10})},
                       {{"axis", int64_t{1}}, {"split", Ints{5, 5}}}, 3);
  MT_CHECK_INFER_FAILS("axis 2 is out of range", "split", {tensor({2, 10})},
                       {{"axis", int64_t{2}}, {"split", Ints{2}}});
}

TEST_CASE("slice follows ONNX: negative indices, clamping, negative steps") {
  auto slice = [](Shape shape, Ints starts, Ints ends, Ints axes = {}, Ints steps = {}) {
    return infer_shape("slice", {tensor(std::move(shape))},
                       {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}});
  };
  CHECK(slice({10, 8}, {2}, {7}) == Shape{5, 8});
  CHECK(slice({10, 8}, {1, 2}, {3, 8}) == Shape{2, 6});
  CHECK(slice({10, 8}, {-3}, {kInt64Max}, {1}) == Shape{10, 3});
  CHECK(slice({10, 8}, {0}, {-1}, {-2}) == Shape{9, 8});
  CHECK(slice({10, 8}, {1}, {1000}, {0}, {3}) == Shape{3, 8});  // 1, 4, 7
  CHECK(slice({10, 8}, {-1}, {kInt64Min}, {0}, {-1}) == Shape{10, 8});
  CHECK(slice({10, 8}, {8}, {1}, {0}, {-3}) == Shape{3, 8});       // 8, 5, 2
  CHECK(slice({10, 8}, {100}, {-100}, {0}, {-4}) == Shape{3, 8});  // 9, 5, 1
  CHECK(slice({10, 8}, {5}, {2}) == Shape{0, 8});
  CHECK(slice({10, 8}, {0}, {10}, {0}, {kInt64Max}) == Shape{1, 8});
  CHECK(slice({10, 8}, {9}, {kInt64Min}, {0}, {kInt64Min}) == Shape{1, 8});
  CHECK(slice({0, 8}, {0}, {-1}, {0}, {-1}) == Shape{0, 8});
  auto fails = [](std::string fragment, Ints starts, Ints ends, Ints axes, Ints steps) {
    MT_CHECK_INFER_FAILS(fragment, "slice", {tensor({10, 8})},
                         {{"starts", starts}, {"ends", ends}, {"axes", axes}, {"steps", steps}});
  };
  fails("starts has 1 values but ends has 2", {1}, {2, 3}, {}, {});
  fails("axes has 2 values but starts has 1", {1}, {2}, {0, 1}, {});
  fails("steps has 2 values but starts has 1", {1}, {2}, {}, {1, 1});
  fails("3 starts given for an input of rank 2", {0, 0, 0}, {1, 1, 1}, {}, {});
  fails("axis 2 is out of range for rank 2", {0}, {1}, {2}, {});
  fails("axis -1 is sliced twice", {0, 0}, {1, 1}, {1, -1}, {});
  fails("step of axis 0 is 0", {0}, {1}, {0}, {0});
  MT_CHECK_INFER_FAILS("missing required attribute 'ends'", "slice", {tensor({10})}, {{"starts", Ints{0}}});
}

TEST_CASE("squeeze and unsqueeze") {
  CHECK(infer_shape("squeeze", {tensor({1, 3, 1, 2})}) == Shape{3, 2});
  CHECK(infer_shape("squeeze", {tensor({1, 3, 1, 2})}, {{"axes", Ints{-2}}}) == Shape{1, 3, 2});
  CHECK(infer_shape("squeeze", {tensor({1})}) == Shape{});
  MT_CHECK_INFER_FAILS("cannot squeeze axis 1 of size 3", "squeeze", {tensor({1, 3})}, {{"axes", Ints{1}}});
  MT_CHECK_INFER_FAILS("axis 2 is out of range", "squeeze", {tensor({1, 3})}, {{"axes", Ints{2}}});
  MT_CHECK_INFER_FAILS("axis -2 is listed twice", "squeeze", {tensor({1, 3})}, {{"axes", Ints{0, -2}}});

  CHECK(infer_shape("unsqueeze", {tensor({3, 4})}, {{"axes", Ints{0}}}) == Shape{1, 3, 4});
  CHECK(infer_shape("unsqueeze", {tensor({3, 4})}, {{"axes", Ints{-1, 1}}}) == Shape{3, 1, 4, 1});
  CHECK(infer_shape("unsqueeze", {tensor({})}, {{"axes", Ints{0}}}) == Shape{1});
  MT_CHECK_INFER_FAILS("axis 3 is out of range for output rank 3", "unsqueeze", {tensor({3, 4})}, {{"axes", Ints{3}}});
  MT_CHECK_INFER_FAILS("axis -2 is listed twice", "unsqueeze", {tensor({3, 4})}, {{"axes", Ints{0, 3, -2}}});
  MT_CHECK_INFER_FAILS("'axes' is empty", "unsqueeze", {tensor({3, 4})}, {{"axes", Ints{}}});
  MT_CHECK_INFER_FAILS("missing required attribute 'axes'", "unsqueeze", {tensor({3, 4})});
}

TEST_CASE("expand broadcasts both ways") {
  CHECK(infer_shape("expand", {tensor({3, 1})}, {{"shape", Ints{2, 1, 4}}}) == Shape{2, 3, 4});
  CHECK(infer_shape("expand", {tensor({2, 3, 4})}, {{"shape", Ints{4}}}) == Shape{2, 3, 4});
  CHECK(infer_shape("expand", {tensor({1, 4})}, {{"shape", Ints{0, 1}}}) == Shape{0, 4});
  MT_CHECK_INFER_FAILS("cannot broadcast 3x2 to 4", "expand", {tensor({3, 2})}, {{"shape", Ints{4}}});
  MT_CHECK_INFER_FAILS("negative dimension -1", "expand", {tensor({3, 2})}, {{"shape", Ints{-1, 2}}});
}

TEST_CASE("gather inserts the indices shape at axis") {
  CHECK(infer_shape("gather", {tensor({5, 6, 7}), tensor({2, 3}, DType::i64)}, {{"axis", int64_t{1}}}) ==
        Shape{5, 2, 3, 7});
  CHECK(infer_shape("gather", {tensor({5, 6}), tensor({}, DType::i32)}) == Shape{6});
  CHECK(infer_shape("gather", {tensor({5, 6}), constant_i64({2}, {-5, 4})}) == Shape{2, 6});
  auto out = infer("gather", {tensor({4}, DType::i64), tensor({1}, DType::i64)});
  CHECK(out[0].dtype == DType::i64);
  MT_CHECK_INFER_FAILS("index 5 is out of range for axis 0 of size 5", "gather",
                       {tensor({5, 6}), constant_i64({2}, {0, 5})});
  MT_CHECK_INFER_FAILS("index -6 is out of range", "gather", {tensor({5, 6}), constant_i64({1}, {-6})});
  MT_CHECK_INFER_FAILS("must be int64 or int32, got float32", "gather", {tensor({5, 6}), tensor({2})});
  MT_CHECK_INFER_FAILS("axis -3 is out of range for rank 2", "gather", {tensor({5, 6}), tensor({2}, DType::i64)},
                       {{"axis", int64_t{-3}}});
  MT_CHECK_INFER_FAILS("expects 2 to 2 inputs, got 1", "gather", {tensor({5, 6})});
}

TEST_CASE("identity copies dtype and shape") {
  auto out = infer("identity", {tensor({2, 3}, DType::i8)});
  CHECK(out[0].shape == Shape{2, 3});
  CHECK(out[0].dtype == DType::i8);
  MT_CHECK_INFER_FAILS("unknown attribute 'axis'", "identity", {tensor({2})}, {{"axis", int64_t{0}}});
}

}  // namespace
}  // namespace mt::test
