// Shape inference of the norm family: batch_norm parameters must be [C]; layer_norm's axis
// and the broadcast of its scale and bias onto X.shape[axis:].
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("norm: batch_norm") {
  const TensorInfo c3 = tensor({3});
  CHECK(infer_shape("batch_norm", {tensor({2, 3, 4, 4}), c3, c3, c3, c3}) == Shape{2, 3, 4, 4});
  CHECK(infer_shape("batch_norm", {tensor({5, 3}), c3, c3, c3, c3}) == Shape{5, 3});
  CHECK(infer_shape("batch_norm", {tensor({1, 3, 8}), c3, c3, c3, c3}, {{"epsilon", 1e-3}}) == Shape{1, 3, 8});
  MT_CHECK_INFER_FAILS("input 'in0' must have rank >= 2, got shape 3", "batch_norm", {tensor({3}), c3, c3, c3, c3});
  MT_CHECK_INFER_FAILS("input 'in2' must have shape 3 (the channels of X), got 4", "batch_norm",
                       {tensor({1, 3, 2, 2}), c3, tensor({4}), c3, c3});
  MT_CHECK_INFER_FAILS("input 'in4' must have shape 3 (the channels of X), got 3x1", "batch_norm",
                       {tensor({1, 3, 2, 2}), c3, c3, c3, tensor({3, 1})});
  MT_CHECK_INFER_FAILS("input 'in3' is float16 but input 'in0' is float32", "batch_norm",
                       {tensor({1, 3, 2, 2}), c3, c3, tensor({3}, DType::f16), c3});
  MT_CHECK_INFER_FAILS("expects 5 to 5 inputs, got 4", "batch_norm", {tensor({1, 3, 2, 2}), c3, c3, c3});
  MT_CHECK_INFER_FAILS("input 4 is required", "batch_norm", {tensor({1, 3, 2, 2}), c3, c3, c3, std::nullopt});
}

TEST_CASE("norm: layer_norm") {
  const TensorInfo x = tensor({2, 3, 4});
  CHECK(infer_shape("layer_norm", {x, tensor({4}), tensor({4})}) == Shape{2, 3, 4});
  CHECK(infer_shape("layer_norm", {x}) == Shape{2, 3, 4});
  CHECK(infer_shape("layer_norm", {x, std::nullopt, tensor({4})}) == Shape{2, 3, 4});
  CHECK(infer_shape("layer_norm", {x, tensor({3, 4})}, {{"axis", int64_t{1}}}) == Shape{2, 3, 4});
  CHECK(infer_shape("layer_norm", {x, tensor({1, 4}), tensor({3, 1})}, {{"axis", int64_t{-2}}}) == Shape{2, 3, 4});
  CHECK(infer_shape("layer_norm", {x, tensor({2, 3, 4})}, {{"axis", int64_t{0}}}) == Shape{2, 3, 4});
  CHECK(infer_shape("layer_norm", {x, tensor({})}) == Shape{2, 3, 4});
  MT_CHECK_INFER_FAILS("scale 'in1' has shape 3, which does not broadcast to 4", "layer_norm", {x, tensor({3})});
  MT_CHECK_INFER_FAILS("bias 'in2' has shape 2x3x4, which does not broadcast to 3x4", "layer_norm",
                       {x, tensor({3, 4}), tensor({2, 3, 4})}, {{"axis", int64_t{1}}});
  MT_CHECK_INFER_FAILS("attribute 'axis' = 3 is out of range for rank 3", "layer_norm", {x}, {{"axis", int64_t{3}}});
  MT_CHECK_INFER_FAILS("attribute 'axis' = -4 is out of range for rank 3", "layer_norm", {x}, {{"axis", int64_t{-4}}});
  MT_CHECK_INFER_FAILS("input 'in0' must have rank >= 1, got shape scalar", "layer_norm", {tensor({})});
  MT_CHECK_INFER_FAILS("input 'in1' is float16 but input 'in0' is float32", "layer_norm", {x, tensor({4}, DType::f16)});
  MT_CHECK_INFER_FAILS("expects 1 to 3 inputs, got 4", "layer_norm", {x, tensor({4}), tensor({4}), tensor({4})});
}
