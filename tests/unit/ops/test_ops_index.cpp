// Shape inference of the index family: trilu's k operand, tile's repeats, the index operands of
// gather_elements, gather_nd, scatter_elements and scatter_nd (ranks, shapes, dtypes, batch_dims)
// and the scatter reductions.
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("index: trilu") {
  CHECK(infer_shape("trilu", {tensor({2, 4, 5})}) == Shape{2, 4, 5});
  CHECK(infer_shape("trilu", {tensor({4, 5}), tensor({}, DType::i64)}) == Shape{4, 5});
  MT_CHECK_INFER_FAILS("must have rank >= 2", "trilu", {tensor({5})});
  MT_CHECK_INFER_FAILS("input 'k' must be one int64 value, not int32", "trilu",
                       {tensor({4, 5}), tensor({}, DType::i32)});
  MT_CHECK_INFER_FAILS("input 'k' must be one int64 value", "trilu", {tensor({4, 5}), tensor({2}, DType::i64)});
}

TEST_CASE("index: tile") {
  CHECK(infer_shape("tile", {tensor({2, 3})}, {{"repeats", std::vector<int64_t>{3, 0}}}) == Shape{6, 0});
  MT_CHECK_INFER_FAILS("attribute 'repeats' has 1 values for an input of rank 2", "tile", {tensor({2, 3})},
                       {{"repeats", std::vector<int64_t>{3}}});
  MT_CHECK_INFER_FAILS("negative value -1", "tile", {tensor({2})}, {{"repeats", std::vector<int64_t>{-1}}});
}

TEST_CASE("index: gather_elements and scatter_elements") {
  const auto out = infer("gather_elements", {tensor({3, 4}, DType::i32), tensor({5, 2}, DType::i64)});
  CHECK(out[0].dtype == DType::i32);
  CHECK(out[0].shape == Shape{5, 2});
  MT_CHECK_INFER_FAILS("larger than data shape", "gather_elements", {tensor({3, 4}), tensor({2, 5}, DType::i64)});
  MT_CHECK_INFER_FAILS("indices of rank 1 for data of rank 2", "gather_elements",
                       {tensor({3, 4}), tensor({2}, DType::i64)});
  MT_CHECK_INFER_FAILS("must be int64 or int32 indices, not float32", "gather_elements", {tensor({3}), tensor({2})});
  CHECK(infer_shape("scatter_elements", {tensor({3, 4}), tensor({5, 2}, DType::i64), tensor({5, 2})}) == Shape{3, 4});
  MT_CHECK_INFER_FAILS("updates shape 5x1 differs from indices shape 5x2", "scatter_elements",
                       {tensor({3, 4}), tensor({5, 2}, DType::i64), tensor({5, 1})});
  MT_CHECK_INFER_FAILS("'reduction' = \"sum\" is not none, add, mul, max or min", "scatter_elements",
                       {tensor({3}), tensor({2}, DType::i64), tensor({2})}, {{"reduction", std::string("sum")}});
}

TEST_CASE("index: gather_nd and scatter_nd") {
  CHECK(infer_shape("gather_nd", {tensor({2, 3, 4}), tensor({5, 2}, DType::i64)}) == Shape{5, 4});
  CHECK(infer_shape("gather_nd", {tensor({2, 3, 4}), tensor({2, 5, 1}, DType::i64)}, {{"batch_dims", int64_t{1}}}) ==
        Shape{2, 5, 4});
  MT_CHECK_INFER_FAILS("the last dimension of indices (4) must be in [1, 3]", "gather_nd",
                       {tensor({2, 3, 4}), tensor({5, 4}, DType::i64)});
  MT_CHECK_INFER_FAILS("batch dimension 0 differs", "gather_nd", {tensor({2, 3}), tensor({3, 1}, DType::i64)},
                       {{"batch_dims", int64_t{1}}});
  CHECK(infer_shape("scatter_nd", {tensor({4, 5}), tensor({3, 1}, DType::i64), tensor({3, 5})}) == Shape{4, 5});
  MT_CHECK_INFER_FAILS("updates shape 3 must be 3x5", "scatter_nd",
                       {tensor({4, 5}), tensor({3, 1}, DType::i64), tensor({3})});
}
