// Shape inference of the logic family: bool results of comparisons, bool operands of the boolean
// ops, float operands of is_nan/is_inf, where's three-way broadcasting.
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("logic: comparisons broadcast operands of one dtype to a bool tensor") {
  for (const char* op : {"equal", "less", "less_or_equal", "greater", "greater_or_equal"}) {
    INFO("op ", std::string(op));
    const auto out = infer(op, {tensor({2, 1, 3}), tensor({4, 1})});
    CHECK(out[0].dtype == DType::boolean);
    CHECK(out[0].shape == Shape{2, 4, 3});
    CHECK(infer(op, {tensor({2}, DType::i64), tensor({}, DType::i64)})[0].dtype == DType::boolean);
    MT_CHECK_INFER_FAILS("both must have the same dtype", op, {tensor({2}), tensor({2}, DType::i32)});
    MT_CHECK_INFER_FAILS("does not broadcast", op, {tensor({2, 3}), tensor({4})});
  }
}

TEST_CASE("logic: boolean ops take bool tensors") {
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    INFO("op ", std::string(op));
    const auto out = infer(op, {tensor({3, 1}, DType::boolean), tensor({5}, DType::boolean)});
    CHECK(out[0].dtype == DType::boolean);
    CHECK(out[0].shape == Shape{3, 5});
    MT_CHECK_INFER_FAILS("input 'in1' is float32, expected bool", op, {tensor({2}, DType::boolean), tensor({2})});
  }
  CHECK(infer_shape("logical_not", {tensor({2, 3}, DType::boolean)}) == Shape{2, 3});
  MT_CHECK_INFER_FAILS("input 'in0' is int64, expected bool", "logical_not", {tensor({2}, DType::i64)});
}

TEST_CASE("logic: is_nan and is_inf classify float tensors") {
  for (const char* op : {"is_nan", "is_inf"}) {
    INFO("op ", std::string(op));
    const auto out = infer(op, {tensor({2, 5})});
    CHECK(out[0].dtype == DType::boolean);
    CHECK(out[0].shape == Shape{2, 5});
    MT_CHECK_INFER_FAILS("it must be a float tensor", op, {tensor({2}, DType::i32)});
  }
}

TEST_CASE("logic: where broadcasts condition, X and Y and keeps X's dtype") {
  const auto out = infer("where", {tensor({2, 1}, DType::boolean), tensor({3}, DType::i64), tensor({}, DType::i64)});
  CHECK(out[0].dtype == DType::i64);
  CHECK(out[0].shape == Shape{2, 3});
  MT_CHECK_INFER_FAILS("input 'in0' is float32, expected bool", "where", {tensor({2}), tensor({2}), tensor({2})});
  MT_CHECK_INFER_FAILS("both must have the same dtype", "where",
                       {tensor({2}, DType::boolean), tensor({2}), tensor({2}, DType::i32)});
  MT_CHECK_INFER_FAILS("does not broadcast", "where", {tensor({2}, DType::boolean), tensor({3}), tensor({3})});
}
