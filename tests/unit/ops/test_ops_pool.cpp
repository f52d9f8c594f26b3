// Shape inference of the pool family: floor and ceil_mode output sizes, dilation, global
// pooling, and every rejected input.
#include <doctest/doctest.h>

#include "tests/unit/ops/infer_node_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;

TEST_CASE("max_pool2d and avg_pool2d output sizes") {
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    INFO("op: ", op);
    CHECK(infer_shape(op, {tensor({1, 64, 112, 112})},
                      {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}) ==
          Shape{1, 64, 56, 56});
    // Floor: (6 - 3) / 2 + 1 = 2; ceil_mode: ceil(3 / 2) + 1 = 3.
    CHECK(infer_shape(op, {tensor({1, 1, 6, 6})}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}) ==
          Shape{1, 1, 2, 2});
    CHECK(infer_shape(op, {tensor({1, 1, 6, 6})},
                      {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}) ==
          Shape{1, 1, 3, 3});
    // ceil(5 / 2) + 1 = 4 windows, but the 4th would start at 6 - 1 = 5, in the end padding: 3.
    CHECK(infer_shape(op, {tensor({1, 1, 5, 5})},
                      {{"kernel_shape", Ints{2, 2}},
                       {"strides", Ints{2, 2}},
                       {"pads", Ints{1, 1, 1, 1}},
                       {"ceil_mode", int64_t{1}}}) == Shape{1, 1, 3, 3});
    // Asymmetric pads and a rectangular kernel: H (7 + 2 + 0 - 3) / 1 + 1 = 7, W (8 + 0 + 1 - 2) / 3 + 1 = 3.
    CHECK(infer_shape(op, {tensor({2, 3, 7, 8})},
                      {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{1, 3}}, {"pads", Ints{2, 0, 0, 1}}}) ==
          Shape{2, 3, 7, 3});
  }
  // Dilation 2 makes a 3-tap window span 5.
  CHECK(infer_shape("max_pool2d", {tensor({1, 1, 7, 7})}, {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 1}}}) ==
        Shape{1, 1, 3, 5});
  CHECK(infer_shape("avg_pool2d", {tensor({1, 1, 4, 4})},
                    {{"kernel_shape", Ints{2, 2}}, {"count_include_pad", int64_t{1}}}) == Shape{1, 1, 3, 3});
}

TEST_CASE("max_pool2d and avg_pool2d reject bad inputs and attributes") {
  const TensorInfo x = tensor({1, 2, 6, 6});
  const Attribute k3 = Ints{3, 3};
  for (const char* op : {"max_pool2d", "avg_pool2d"}) {
    INFO("op: ", op);
    MT_CHECK_INFER_FAILS("input 'in0' must have rank 4, got shape 2x6x6", op, {tensor({2, 6, 6})},
                         {{"kernel_shape", k3}});
    MT_CHECK_INFER_FAILS("missing required attribute 'kernel_shape'", op, {x});
    MT_CHECK_INFER_FAILS("attribute 'kernel_shape' must have 2 values, got 1", op, {x}, {{"kernel_shape", Ints{3}}});
    MT_CHECK_INFER_FAILS("attribute 'kernel_shape' = [3,0] must hold values in [1, 2^40]", op, {x},
                         {{"kernel_shape", Ints{3, 0}}});
    MT_CHECK_INFER_FAILS("attribute 'strides' = [0,1] must hold values in [1, 2^40]", op, {x},
                         {{"kernel_shape", k3}, {"strides", Ints{0, 1}}});
    MT_CHECK_INFER_FAILS("attribute 'pads' = [0,0,-1,0] must hold values in [0, 2^40]", op, {x},
                         {{"kernel_shape", k3}, {"pads", Ints{0, 0, -1, 0}}});
    MT_CHECK_INFER_FAILS("pads [0,3,0,0] must be smaller than the window (3x3)", op, {x},
                         {{"kernel_shape", k3}, {"pads", Ints{0, 3, 0, 0}}});
    MT_CHECK_INFER_FAILS("attribute 'ceil_mode' must be 0 or 1, got 2", op, {x},
                         {{"kernel_shape", k3}, {"ceil_mode", int64_t{2}}});
    MT_CHECK_INFER_FAILS("output height would be 0: input height 2, window extent 3, pads 0+0", op,
                         {tensor({1, 1, 2, 5})}, {{"kernel_shape", k3}});
    MT_CHECK_INFER_FAILS("output width would be 0", op, {tensor({1, 1, 5, 1})},
                         {{"kernel_shape", k3}, {"pads", Ints{0, 0, 0, 1}}});
  }
  MT_CHECK_INFER_FAILS("attribute 'dilations' = [1,0] must hold values in [1, 2^40]", "max_pool2d", {x},
                       {{"kernel_shape", k3}, {"dilations", Ints{1, 0}}});
  // With dilation the window is wider, so larger pads are allowed: extent 5 admits pad 4.
  CHECK(infer_shape("max_pool2d", {x}, {{"kernel_shape", k3}, {"dilations", Ints{2, 2}}, {"pads", Ints{4, 4, 4, 4}}}) ==
        Shape{1, 2, 10, 10});
  MT_CHECK_INFER_FAILS("must be smaller than the window (5x5)", "max_pool2d", {x},
                       {{"kernel_shape", k3}, {"dilations", Ints{2, 2}}, {"pads", Ints{5, 0, 0, 0}}});
  MT_CHECK_INFER_FAILS("unknown attribute 'dilations'", "avg_pool2d", {x},
                       {{"kernel_shape", k3}, {"dilations", Ints{1, 1}}});
  MT_CHECK_INFER_FAILS("unknown attribute 'count_include_pad'", "max_pool2d", {x},
                       {{"kernel_shape", k3}, {"count_include_pad", int64_t{1}}});
  MT_CHECK_INFER_FAILS("attribute 'count_include_pad' must be 0 or 1, got -1", "avg_pool2d", {x},
                       {{"kernel_shape", k3}, {"count_include_pad", int64_t{-1}}});
}

TEST_CASE("global pooling keeps N and C and sets every spatial axis to 1") {
  for (const char* op : {"global_avg_pool", "global_max_pool"}) {
    INFO("op: ", op);
    CHECK(infer_shape(op, {tensor({2, 8, 7, 5})}) == Shape{2, 8, 1, 1});
    CHECK(infer_shape(op, {tensor({2, 8, 7})}) == Shape{2, 8, 1});
    CHECK(infer_shape(op, {tensor({1, 3, 4, 5, 6})}) == Shape{1, 3, 1, 1, 1});
    MT_CHECK_INFER_FAILS("input 'in0' must have rank >= 3, got shape 2x8", op, {tensor({2, 8})});
    MT_CHECK_INFER_FAILS("input 'in0' 1x3x0x5 has an empty spatial axis", op, {tensor({1, 3, 0, 5})});
  }
}

}  // namespace
}  // namespace mt::test
