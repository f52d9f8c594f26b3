// Shape inference of the reduce family: axes (negative, empty = all, duplicates), keepdims,
// and softmax's axis.
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

namespace {

Attributes axes(std::vector<int64_t> list, int64_t keepdims = 1) {
  return {{"axes", std::move(list)}, {"keepdims", keepdims}};
}

}  // namespace

TEST_CASE("reduce: output shapes") {
  for (const char* op : {"reduce_mean", "reduce_sum", "reduce_max", "reduce_min"}) {
    INFO("op ", std::string(op));
    REQUIRE(find_op(op) != nullptr);
    CHECK(infer_shape(op, {tensor({2, 3, 4})}) == Shape{1, 1, 1});  // defaults: all axes, keepdims
    CHECK(infer_shape(op, {tensor({2, 3, 4})}, axes({}, 0)) == Shape{});
    CHECK(infer_shape(op, {tensor({2, 3, 4})}, axes({1})) == Shape{2, 1, 4});
    CHECK(infer_shape(op, {tensor({2, 3, 4})}, axes({1}, 0)) == Shape{2, 4});
    CHECK(infer_shape(op, {tensor({2, 3, 4})}, axes({-1, 0}, 0)) == Shape{3});
    CHECK(infer_shape(op, {tensor({2, 3, 4})}, axes({2, 0})) == Shape{1, 3, 1});
    CHECK(infer_shape(op, {tensor({})}) == Shape{});
    CHECK(infer(op, {tensor({2}, DType::f16)})[0].dtype == DType::f16);
    MT_CHECK_INFER_FAILS("attribute 'axes' = 3 is out of range for rank 3", op, {tensor({2, 3, 4})}, axes({3}));
    MT_CHECK_INFER_FAILS("attribute 'axes' = -4 is out of range for rank 3", op, {tensor({2, 3, 4})}, axes({-4}));
    MT_CHECK_INFER_FAILS("attribute 'axes' names axis 2 twice", op, {tensor({2, 3, 4})}, axes({2, -1}));
    MT_CHECK_INFER_FAILS("attribute 'keepdims' must be 0 or 1, got 2", op, {tensor({2})}, axes({0}, 2));
    MT_CHECK_INFER_FAILS("attribute 'axes' must be ints, got int", op, {tensor({2})}, {{"axes", int64_t{0}}});
  }
}

TEST_CASE("reduce: softmax and log_softmax axis") {
  for (const char* op : {"softmax", "log_softmax"}) {
    INFO("op ", std::string(op));
    REQUIRE(find_op(op) != nullptr);
    CHECK(infer_shape(op, {tensor({2, 5})}) == Shape{2, 5});
    CHECK(infer_shape(op, {tensor({2, 5, 3})}, {{"axis", int64_t{1}}}) == Shape{2, 5, 3});
    CHECK(infer_shape(op, {tensor({2, 5, 3})}, {{"axis", int64_t{-3}}}) == Shape{2, 5, 3});
    MT_CHECK_INFER_FAILS("attribute 'axis' = 3 is out of range for rank 3", op, {tensor({2, 5, 3})},
                         {{"axis", int64_t{3}}});
    MT_CHECK_INFER_FAILS("attribute 'axis' = -4 is out of range for rank 3", op, {tensor({2, 5, 3})},
                         {{"axis", int64_t{-4}}});
    MT_CHECK_INFER_FAILS("input 'in0' must have rank >= 1, got shape scalar", op, {tensor({})});
  }
}

TEST_CASE("reduce: the l1, l2, sum_square, log_sum and log_sum_exp reductions share reduce's shapes") {
  for (const char* op : {"reduce_l1", "reduce_l2", "reduce_sum_square", "reduce_log_sum", "reduce_log_sum_exp"}) {
    INFO("op ", std::string(op));
    CHECK(infer_shape(op, {tensor({2, 3, 4})}) == Shape{1, 1, 1});
    CHECK(infer_shape(op, {tensor({2, 3, 4})}, axes({-1, 0}, 0)) == Shape{3});
    MT_CHECK_INFER_FAILS("attribute 'axes' names axis 2 twice", op, {tensor({2, 3, 4})}, axes({2, -1}));
  }
  CHECK(infer_shape("hardmax", {tensor({2, 5, 3})}, {{"axis", int64_t{1}}}) == Shape{2, 5, 3});
}

TEST_CASE("reduce: argmax and argmin give int64 indices") {
  for (const char* op : {"argmax", "argmin"}) {
    INFO("op ", std::string(op));
    const auto out = infer(op, {tensor({2, 3, 4})}, {{"axis", int64_t{1}}});
    CHECK(out[0].dtype == DType::i64);
    CHECK(out[0].shape == Shape{2, 1, 4});
    CHECK(infer_shape(op, {tensor({2, 3, 4})}) == Shape{1, 3, 4});  // default axis 0, keepdims
    CHECK(infer_shape(op, {tensor({2, 3, 4})}, {{"axis", int64_t{-1}}, {"keepdims", int64_t{0}}}) == Shape{2, 3});
    MT_CHECK_INFER_FAILS("attribute 'axis' = 3 is out of range for rank 3", op, {tensor({2, 3, 4})},
                         {{"axis", int64_t{3}}});
    MT_CHECK_INFER_FAILS("attribute 'select_last_index' must be 0 or 1, got 2", op, {tensor({2})},
                         {{"select_last_index", int64_t{2}}});
    MT_CHECK_INFER_FAILS("axis 1 is empty", op, {tensor({2, 0})}, {{"axis", int64_t{1}}});
  }
}

TEST_CASE("reduce: cumsum keeps the shape, needs an axis") {
  CHECK(infer_shape("cumsum", {tensor({4, 5})}, {{"axis", int64_t{-1}}}) == Shape{4, 5});
  CHECK(infer("cumsum", {tensor({4}, DType::i64)}, {{"axis", int64_t{0}}})[0].dtype == DType::i64);
  MT_CHECK_INFER_FAILS("'axis'", "cumsum", {tensor({4, 5})});
  MT_CHECK_INFER_FAILS("attribute 'exclusive' must be 0 or 1, got 3", "cumsum", {tensor({4})},
                       {{"axis", int64_t{0}}, {"exclusive", int64_t{3}}});
}
