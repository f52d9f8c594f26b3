// Shape inference of the linear family: linear's W [N, K] against X [..., K] and B [N];
// matmul's numpy semantics (1-D promotion, batch broadcast).
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("linear: output shapes") {
  CHECK(infer_shape("linear", {tensor({2, 3}), tensor({4, 3}), tensor({4})}) == Shape{2, 4});
  CHECK(infer_shape("linear", {tensor({2, 3}), tensor({4, 3})}) == Shape{2, 4});
  CHECK(infer_shape("linear", {tensor({2, 3}), tensor({4, 3}), std::nullopt}) == Shape{2, 4});
  CHECK(infer_shape("linear", {tensor({5}), tensor({2, 5})}) == Shape{2});
  CHECK(infer_shape("linear", {tensor({2, 7, 3}), tensor({4, 3}), tensor({4})}) == Shape{2, 7, 4});
  CHECK(infer_shape("linear", {tensor({2, 3}), tensor({4, 3})}, {{"act_min", 0.0}, {"act_max", 6.0}}) == Shape{2, 4});
  CHECK(infer("linear", {tensor({2, 3}, DType::i8), tensor({4, 3}, DType::i8), tensor({4}, DType::i32)})[0].dtype ==
        DType::i8);
}

TEST_CASE("linear: failures") {
  MT_CHECK_INFER_FAILS("weight 'in1' has shape 4x2 but X 'in0' (2x3) has 3 features; W must be [N, 3]", "linear",
                       {tensor({2, 3}), tensor({4, 2})});
  MT_CHECK_INFER_FAILS("input 'in1' must have rank 2, got shape 3", "linear", {tensor({2, 3}), tensor({3})});
  MT_CHECK_INFER_FAILS("input 'in1' must have rank 2, got shape 1x4x3", "linear", {tensor({2, 3}), tensor({1, 4, 3})});
  MT_CHECK_INFER_FAILS("input 'in0' must have rank >= 1, got shape scalar", "linear", {tensor({}), tensor({4, 3})});
  MT_CHECK_INFER_FAILS("bias 'in2' must have shape 4 (the rows of W), got 3", "linear",
                       {tensor({2, 3}), tensor({4, 3}), tensor({3})});
  MT_CHECK_INFER_FAILS("bias 'in2' must have shape 4 (the rows of W), got 1x4", "linear",
                       {tensor({2, 3}), tensor({4, 3}), tensor({1, 4})});
  MT_CHECK_INFER_FAILS("input 'in1' is float16 but input 'in0' is float32", "linear",
                       {tensor({2, 3}), tensor({4, 3}, DType::f16)});
  MT_CHECK_INFER_FAILS("input 'in2' is int32 but input 'in0' is float32", "linear",
                       {tensor({2, 3}), tensor({4, 3}), tensor({4}, DType::i32)});
  MT_CHECK_INFER_FAILS("attribute 'act_min' (1) is greater than 'act_max' (0)", "linear",
                       {tensor({2, 3}), tensor({4, 3})}, {{"act_min", 1.0}, {"act_max", 0.0}});
  MT_CHECK_INFER_FAILS("expects 2 to 3 inputs, got 1", "linear", {tensor({2, 3})});
}

TEST_CASE("matmul: numpy shapes") {
  CHECK(infer_shape("matmul", {tensor({2, 3}), tensor({3, 4})}) == Shape{2, 4});
  CHECK(infer_shape("matmul", {tensor({3}), tensor({3, 4})}) == Shape{4});
  CHECK(infer_shape("matmul", {tensor({2, 3}), tensor({3})}) == Shape{2});
  CHECK(infer_shape("matmul", {tensor({3}), tensor({3})}) == Shape{});
  CHECK(infer_shape("matmul", {tensor({5, 1, 2, 3}), tensor({4, 3, 6})}) == Shape{5, 4, 2, 6});
  CHECK(infer_shape("matmul", {tensor({2, 3}), tensor({7, 3, 4})}) == Shape{7, 2, 4});
  CHECK(infer_shape("matmul", {tensor({7, 2, 3}), tensor({3})}) == Shape{7, 2});
  CHECK(infer_shape("matmul", {tensor({3}), tensor({7, 3, 4})}) == Shape{7, 4});
  CHECK(infer_shape("matmul", {tensor({2, 0}), tensor({0, 4})}) == Shape{2, 4});
}

TEST_CASE("matmul: failures") {
  MT_CHECK_INFER_FAILS("inner dimensions differ: A 'in0' is 2x3 and B 'in1' is 4x5", "matmul",
                       {tensor({2, 3}), tensor({4, 5})});
  MT_CHECK_INFER_FAILS("inner dimensions differ: A 'in0' is 3 and B 'in1' is 4", "matmul", {tensor({3}), tensor({4})});
  MT_CHECK_INFER_FAILS("batch dimensions do not broadcast: A 'in0' is 2x2x3 and B 'in1' is 3x3x4", "matmul",
                       {tensor({2, 2, 3}), tensor({3, 3, 4})});
  MT_CHECK_INFER_FAILS("input 'in0' must have rank >= 1, got shape scalar", "matmul", {tensor({}), tensor({3})});
  MT_CHECK_INFER_FAILS("input 'in1' must have rank >= 1, got shape scalar", "matmul", {tensor({3}), tensor({})});
  MT_CHECK_INFER_FAILS("input 'in1' is float16 but input 'in0' is float32", "matmul",
                       {tensor({2, 3}), tensor({3, 4}, DType::f16)});
}
