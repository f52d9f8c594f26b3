// Shape inference of resize and pad: output shapes, and every rejected attribute.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tests/unit/ops/infer_node_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

TEST_CASE("resize output is sizes, dtype kept") {
  CHECK(infer_shape("resize", {tensor({1, 3, 4, 5})}, {{"sizes", Ints{1, 3, 8, 10}}}) == Shape{1, 3, 8, 10});
  CHECK(infer_shape("resize", {tensor({1, 3, 4, 5})},
                    {{"sizes", Ints{2, 1, 3, 2}},
                     {"mode", std::string("cubic")},
                     {"coordinate_transformation_mode", std::string("align_corners")}}) == Shape{2, 1, 3, 2});
  CHECK(infer_shape("resize", {tensor({2, 5})},
                    {{"sizes", Ints{2, 8}},
                     {"scales", Floats{1.0, 1.7}},
                     {"mode", std::string("linear")},
                     {"nearest_mode", std::string("ceil")},
                     {"exclude_outside", int64_t{1}},
                     {"cubic_coeff_a", -0.5}}) == Shape{2, 8});
  for (const char* coord : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"})
    CHECK(infer_shape("resize", {tensor({4})},
                      {{"sizes", Ints{2}}, {"coordinate_transformation_mode", std::string(coord)}}) == Shape{2});
  for (const char* mode : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    CHECK(infer_shape("resize", {tensor({4})}, {{"sizes", Ints{2}}, {"nearest_mode", std::string(mode)}}) == Shape{2});
  CHECK(infer("resize", {tensor({1, 1, 2, 2}, DType::f16)}, {{"sizes", Ints{1, 1, 4, 4}}})[0].dtype == DType::f16);
}

TEST_CASE("resize rejects bad attributes") {
  const TensorInfo x = tensor({1, 3, 4, 5});
  const Attribute sizes = Ints{1, 3, 8, 10};
  MT_CHECK_INFER_FAILS("missing required attribute 'sizes'", "resize", {x});
  MT_CHECK_INFER_FAILS("attribute 'sizes' has 2 values for an input of rank 4", "resize", {x},
                       {{"sizes", Ints{8, 10}}});
  MT_CHECK_INFER_FAILS("attribute 'sizes' = [1,3,0,10] must be positive", "resize", {x},
                       {{"sizes", Ints{1, 3, 0, 10}}});
  MT_CHECK_INFER_FAILS("too large", "resize", {x}, {{"sizes", Ints{1, 3, int64_t{1} << 30, int64_t{1} << 30}}});
  MT_CHECK_INFER_FAILS("input 1x0x4x5 has an empty axis", "resize", {tensor({1, 0, 4, 5})}, {{"sizes", sizes}});
  MT_CHECK_INFER_FAILS("cannot resize a scalar", "resize", {tensor({})}, {{"sizes", Ints{}}});
  MT_CHECK_INFER_FAILS("attribute 'scales' has 2 values for an input of rank 4", "resize", {x},
                       {{"sizes", sizes}, {"scales", Floats{2, 2}}});
  MT_CHECK_INFER_FAILS("attribute 'scales' = [1,1,0,2] must be positive and finite", "resize", {x},
                       {{"sizes", sizes}, {"scales", Floats{1, 1, 0, 2}}});
  MT_CHECK_INFER_FAILS("must be positive and finite", "resize", {x},
                       {{"sizes", sizes}, {"scales", Floats{1, 1, -2, 2}}});
  MT_CHECK_INFER_FAILS("must be positive and finite", "resize", {x},
                       {{"sizes", sizes}, {"scales", Floats{1, 1, std::numeric_limits<double>::infinity(), 2}}});
  MT_CHECK_INFER_FAILS("attribute 'mode' = \"bilinear\" must be one of nearest, linear, cubic", "resize", {x},
                       {{"sizes", sizes}, {"mode", std::string("bilinear")}});
  MT_CHECK_INFER_FAILS("attribute 'coordinate_transformation_mode' = \"tf_crop_and_resize\" must be one of", "resize",
                       {x}, {{"sizes", sizes}, {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}});
  MT_CHECK_INFER_FAILS("attribute 'nearest_mode' = \"round\" must be one of", "resize", {x},
                       {{"sizes", sizes}, {"nearest_mode", std::string("round")}});
  MT_CHECK_INFER_FAILS("attribute 'exclude_outside' must be 0 or 1, got 2", "resize", {x},
                       {{"sizes", sizes}, {"exclude_outside", int64_t{2}}});
  MT_CHECK_INFER_FAILS("attribute 'cubic_coeff_a' must be finite", "resize", {x},
                       {{"sizes", sizes}, {"cubic_coeff_a", std::nan("")}});
  MT_CHECK_INFER_FAILS("attribute 'scales' must be floats, got ints", "resize", {x},
                       {{"sizes", sizes}, {"scales", Ints{1, 1, 2, 2}}});
}

TEST_CASE("pad adds begins and ends, negative pads crop") {
  CHECK(infer_shape("pad", {tensor({1, 3, 4, 4})}, {{"pads", Ints{0, 0, 1, 2, 0, 0, 3, 4}}}) == Shape{1, 3, 8, 10});
  CHECK(infer_shape("pad", {tensor({1, 3, 4, 4})}, {{"pads", Ints{0, -1, -2, 0, 0, 0, -2, 1}}}) == Shape{1, 2, 0, 5});
  CHECK(infer_shape("pad", {tensor({4, 5})}, {{"pads", Ints{3, 4, 3, 4}}, {"mode", std::string("reflect")}}) ==
        Shape{10, 13});
  CHECK(infer_shape("pad", {tensor({1, 5})}, {{"pads", Ints{2, 0, 2, 0}}, {"mode", std::string("edge")}}) ==
        Shape{5, 5});
  CHECK(infer_shape("pad", {tensor({0, 5})}, {{"pads", Ints{2, 0, 2, 0}}, {"value", 1.5}}) == Shape{4, 5});
  auto out = infer("pad", {tensor({3}, DType::i64)}, {{"pads", Ints{1, 1}}, {"value", -7.0}});
  CHECK(out[0].dtype == DType::i64);
  CHECK(out[0].shape == Shape{5});
}

TEST_CASE("pad rejects bad attributes") {
  const TensorInfo x = tensor({3, 4});
  MT_CHECK_INFER_FAILS("missing required attribute 'pads'", "pad", {x});
  MT_CHECK_INFER_FAILS("attribute 'pads' has 2 values, expected 2 * rank = 4", "pad", {x}, {{"pads", Ints{1, 1}}});
  MT_CHECK_INFER_FAILS("attribute 'mode' = \"wrap\" must be one of constant, reflect, edge", "pad", {x},
                       {{"pads", Ints{1, 1, 1, 1}}, {"mode", std::string("wrap")}});
  MT_CHECK_INFER_FAILS("pads -2 and -2 on axis 0 of size 3 leave a negative size -1", "pad", {x},
                       {{"pads", Ints{-2, 0, -2, 0}}});
  MT_CHECK_INFER_FAILS("reflect pads 0 and 4 on axis 1 must be smaller than its size 4", "pad", {x},
                       {{"pads", Ints{0, 0, 0, 4}}, {"mode", std::string("reflect")}});
  MT_CHECK_INFER_FAILS("reflect pads 1 and 0 on axis 0 must be smaller than its size 1", "pad", {tensor({1, 4})},
                       {{"pads", Ints{1, 0, 0, 0}}, {"mode", std::string("reflect")}});
  MT_CHECK_INFER_FAILS("cannot edge-pad axis 0 of size 0", "pad", {tensor({0, 4})},
                       {{"pads", Ints{1, 0, 0, 0}}, {"mode", std::string("edge")}});
  MT_CHECK_INFER_FAILS("attribute 'value' = 0.5 cannot be stored in the input's dtype int64", "pad",
                       {tensor({3}, DType::i64)}, {{"pads", Ints{1, 1}}, {"value", 0.5}});
  MT_CHECK_INFER_FAILS("attribute 'value' = 300 cannot be stored in the input's dtype uint8", "pad",
                       {tensor({3}, DType::u8)}, {{"pads", Ints{1, 1}}, {"value", 300.0}});
  MT_CHECK_INFER_FAILS("holds a value beyond 2^40", "pad", {x},
                       {{"pads", Ints{0, 0, std::numeric_limits<int64_t>::min(), 0}}});
}

}  // namespace
}  // namespace mt::test
