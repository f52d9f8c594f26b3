// Shape inference of conv2d and conv_transpose2d: output sizes, and every rejected input.
#include <doctest/doctest.h>

#include "tests/unit/ops/infer_node_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;

TEST_CASE("conv2d output size") {
  CHECK(infer_shape("conv2d", {tensor({1, 3, 224, 224}), tensor({32, 3, 3, 3}), tensor({32})},
                    {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}) == Shape{1, 32, 112, 112});
  CHECK(infer_shape("conv2d", {tensor({2, 4, 10, 9}), tensor({6, 4, 3, 2})}) == Shape{2, 6, 8, 8});
  // oH = floor((10 + 1 + 2 - 2*(3-1) - 1) / 1) + 1 = 9; oW = floor((9 + 0 + 3 - 3*(2-1) - 1) / 2) + 1 = 5.
  CHECK(infer_shape("conv2d", {tensor({1, 4, 10, 9}), tensor({6, 4, 3, 2})},
                    {{"strides", Ints{1, 2}}, {"pads", Ints{1, 0, 2, 3}}, {"dilations", Ints{2, 3}}}) ==
        Shape{1, 6, 9, 5});
  // Groups: depthwise (group = C, multiplier 2) and two groups.
  CHECK(infer_shape("conv2d", {tensor({1, 8, 5, 5}), tensor({16, 1, 3, 3})}, {{"group", int64_t{8}}}) ==
        Shape{1, 16, 3, 3});
  CHECK(infer_shape("conv2d", {tensor({1, 8, 5, 5}), tensor({6, 4, 1, 1}), tensor({6})}, {{"group", int64_t{2}}}) ==
        Shape{1, 6, 5, 5});
  // The kernel may cover the whole padded input; pads may exceed the kernel.
  CHECK(infer_shape("conv2d", {tensor({1, 1, 2, 2}), tensor({1, 1, 4, 4})}, {{"pads", Ints{1, 1, 1, 1}}}) ==
        Shape{1, 1, 1, 1});
  CHECK(infer_shape("conv2d", {tensor({1, 1, 2, 2}), tensor({1, 1, 1, 1})}, {{"pads", Ints{3, 3, 3, 3}}}) ==
        Shape{1, 1, 8, 8});
  CHECK(infer("conv2d", {tensor({1, 1, 2, 2}), tensor({1, 1, 1, 1})}, {{"act_min", 0.0}, {"act_max", 6.0}})[0].dtype ==
        DType::f32);
}

TEST_CASE("conv2d rejects inconsistent inputs and attributes") {
  const TensorInfo x = tensor({1, 4, 8, 8});
  const TensorInfo w = tensor({6, 4, 3, 3});
  MT_CHECK_INFER_FAILS("input 'in0' must have rank 4, got shape 4x8x8", "conv2d", {tensor({4, 8, 8}), w});
  MT_CHECK_INFER_FAILS("input 'in1' must have rank 4, got shape 6x4x3", "conv2d", {x, tensor({6, 4, 3})});
  MT_CHECK_INFER_FAILS("input 'in1' is float16 but input 'in0' is float32", "conv2d",
                       {x, tensor({6, 4, 3, 3}, DType::f16)});
  MT_CHECK_INFER_FAILS("attribute 'group' must be >= 1, got 0", "conv2d", {x, w}, {{"group", int64_t{0}}});
  MT_CHECK_INFER_FAILS("group 3 does not divide the 4 input channels", "conv2d", {x, w}, {{"group", int64_t{3}}});
  MT_CHECK_INFER_FAILS("input 'in0' has no channels", "conv2d", {tensor({1, 0, 8, 8}), tensor({6, 0, 3, 3})});
  MT_CHECK_INFER_FAILS("takes 4 channels per group, but the input has 4 channels in 2 groups", "conv2d", {x, w},
                       {{"group", int64_t{2}}});
  MT_CHECK_INFER_FAILS("takes 3 channels per group", "conv2d", {x, tensor({6, 3, 3, 3})});
  MT_CHECK_INFER_FAILS("has 6 output channels, which is not a positive multiple of group 4", "conv2d",
                       {x, tensor({6, 1, 3, 3})}, {{"group", int64_t{4}}});
  MT_CHECK_INFER_FAILS("bias 'in2' has shape 5, expected 6", "conv2d", {x, w, tensor({5})});
  MT_CHECK_INFER_FAILS("bias 'in2' has shape 1x6, expected 6", "conv2d", {x, w, tensor({1, 6})});
  MT_CHECK_INFER_FAILS("input 'in2' is int32 but input 'in0' is float32", "conv2d", {x, w, tensor({6}, DType::i32)});
  MT_CHECK_INFER_FAILS("weight 1x1x0x3 has an empty kernel", "conv2d", {tensor({1, 1, 5, 5}), tensor({1, 1, 0, 3})});
  MT_CHECK_INFER_FAILS("attribute 'strides' must have 2 values, got 1", "conv2d", {x, w}, {{"strides", Ints{2}}});
  MT_CHECK_INFER_FAILS("attribute 'strides' = [1,0] must hold values in [1, 2^40]", "conv2d", {x, w},
                       {{"strides", Ints{1, 0}}});
  MT_CHECK_INFER_FAILS("attribute 'pads' must have 4 values, got 2", "conv2d", {x, w}, {{"pads", Ints{1, 1}}});
  MT_CHECK_INFER_FAILS("attribute 'pads' = [0,-1,0,0] must hold values in [0, 2^40]", "conv2d", {x, w},
                       {{"pads", Ints{0, -1, 0, 0}}});
  MT_CHECK_INFER_FAILS("attribute 'dilations' = [0,1] must hold values in [1, 2^40]", "conv2d", {x, w},
                       {{"dilations", Ints{0, 1}}});
  MT_CHECK_INFER_FAILS("must hold values in [1, 2^40]", "conv2d", {x, w}, {{"strides", Ints{1, int64_t{1} << 41}}});
  MT_CHECK_INFER_FAILS("dilated kernel extent along W is too large", "conv2d", {x, tensor({6, 4, 3, 1 << 21})},
                       {{"dilations", Ints{1, 1 << 20}}});
  MT_CHECK_INFER_FAILS("output height would be 0: input height 8, kernel extent 9, stride 1, pads 0+0", "conv2d",
                       {x, w}, {{"dilations", Ints{4, 1}}});
  MT_CHECK_INFER_FAILS("output width would be 0", "conv2d", {tensor({1, 4, 8, 2}), w});
  MT_CHECK_INFER_FAILS("attribute 'act_min' (6) is greater than 'act_max' (0)", "conv2d", {x, w},
                       {{"act_min", 6.0}, {"act_max", 0.0}});
  MT_CHECK_INFER_FAILS("attribute 'group' must be int, got float", "conv2d", {x, w}, {{"group", 1.0}});
  MT_CHECK_INFER_FAILS("unknown attribute 'output_padding'", "conv2d", {x, w}, {{"output_padding", Ints{0, 0}}});
  MT_CHECK_INFER_FAILS("expects 2 to 3 inputs, got 1", "conv2d", {x});
}

TEST_CASE("conv_transpose2d output size") {
  // oH = (7 - 1) * 2 - 1 - 1 + (4 - 1) + 1 = 14, plus output_padding.
  CHECK(infer_shape("conv_transpose2d", {tensor({1, 16, 7, 7}), tensor({16, 8, 4, 4}), tensor({8})},
                    {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}) == Shape{1, 8, 14, 14});
  CHECK(infer_shape("conv_transpose2d", {tensor({1, 16, 7, 7}), tensor({16, 8, 4, 4})},
                    {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 0}}}) ==
        Shape{1, 8, 15, 14});
  // Groups multiply the output channels; dilation 2 with output_padding 1 at stride 1.
  // oH = (5 - 1) * 1 - 0 - 2 + 2 * (3 - 1) + 1 + 1 = 8; oW = (6 - 1) * 3 - 1 - 0 + (2 - 1) + 1 + 0 = 16.
  CHECK(infer_shape("conv_transpose2d", {tensor({2, 6, 5, 6}), tensor({6, 4, 3, 2})},
                    {{"group", int64_t{3}},
                     {"strides", Ints{1, 3}},
                     {"pads", Ints{0, 1, 2, 0}},
                     {"dilations", Ints{2, 1}},
                     {"output_padding", Ints{1, 0}}}) == Shape{2, 12, 8, 16});
}

TEST_CASE("conv_transpose2d rejects inconsistent inputs and attributes") {
  const TensorInfo x = tensor({1, 4, 5, 5});
  const TensorInfo w = tensor({4, 3, 3, 3});
  MT_CHECK_INFER_FAILS("weight 'in1' 6x3x3x3 is for 6 input channels, but the input has 4", "conv_transpose2d",
                       {x, tensor({6, 3, 3, 3})});
  MT_CHECK_INFER_FAILS("group 3 does not divide the 4 input channels", "conv_transpose2d", {x, w},
                       {{"group", int64_t{3}}});
  MT_CHECK_INFER_FAILS("must have between 1 and 2^40/group output channels per group", "conv_transpose2d",
                       {x, tensor({4, 0, 3, 3})});
  MT_CHECK_INFER_FAILS("bias 'in2' has shape 3, expected 6", "conv_transpose2d", {x, w, tensor({3})},
                       {{"group", int64_t{2}}});
  MT_CHECK_INFER_FAILS("output_padding [2,0] must be smaller than the stride or the dilation", "conv_transpose2d",
                       {x, w}, {{"strides", Ints{2, 2}}, {"output_padding", Ints{2, 0}}});
  MT_CHECK_INFER_FAILS("output_padding [0,1] must be smaller", "conv_transpose2d", {x, w},
                       {{"output_padding", Ints{0, 1}}});
  MT_CHECK_INFER_FAILS("attribute 'output_padding' must have 2 values, got 4", "conv_transpose2d", {x, w},
                       {{"output_padding", Ints{0, 0, 0, 0}}});
  // (5 - 1) - 4 - 4 + 3 = -1.
  MT_CHECK_INFER_FAILS("output height would be -1", "conv_transpose2d", {x, w}, {{"pads", Ints{4, 0, 4, 0}}});
  MT_CHECK_INFER_FAILS("output width is too large", "conv_transpose2d", {tensor({1, 4, 5, int64_t{1} << 20}), w},
                       {{"strides", Ints{1, int64_t{1} << 40}}});
  MT_CHECK_INFER_FAILS("attribute 'act_min' (1) is greater than 'act_max' (-1)", "conv_transpose2d", {x, w},
                       {{"act_min", 1.0}, {"act_max", -1.0}});
}

}  // namespace
}  // namespace mt::test
