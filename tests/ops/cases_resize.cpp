// Cases of the resize family: every mode (nearest with each rounding, linear, cubic with
// exclude_outside) and every coordinate transformation, upsampling and downsampling, integer and
// fractional scales, sizes-only and explicit scales; pad in every mode, negative pads (crops).
#include <fmt/format.h>

#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_resize_cases(CaseTable& t) {
  const Shape x = {1, 3, 5, 6};
  auto resize = [&](const std::string& name, Shape input, Ints sizes, Floats scales, Attributes more) {
    Attributes attrs = {{"sizes", sizes}};
    if (!scales.empty()) attrs["scales"] = scales;
    for (auto& [k, v] : more) attrs[k] = v;
    t.add("resize", {.name = name, .inputs = {in(input, -3, 3)}, .attrs = attrs});
  };
  const std::vector<std::string> transforms = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                               "tf_half_pixel_for_nn"};
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    for (const auto& transform : {std::string("half_pixel"), std::string("asymmetric"), std::string("align_corners")}) {
      const Attributes attrs = {{"mode", std::string("nearest")}, {"nearest_mode", std::string(nearest)},
                                {"coordinate_transformation_mode", transform}};
      resize(fmt::format("nearest {} {} x2", nearest, transform), x, {1, 3, 10, 12}, {1, 1, 2, 2}, attrs);
      resize(fmt::format("nearest {} {} 5x6 -> 7x4", nearest, transform), x, {1, 3, 7, 4}, {}, attrs);
    }
  resize("nearest tf_half_pixel_for_nn x3", x, {1, 3, 15, 18}, {1, 1, 3, 3},
         {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")}});
  resize("nearest pytorch_half_pixel downsample", x, {1, 3, 2, 3}, {},
         {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}});
  for (const auto& transform : transforms) {
    if (transform == "tf_half_pixel_for_nn") continue;  // defined for nearest only
    const Attributes attrs = {{"mode", std::string("linear")}, {"coordinate_transformation_mode", transform}};
    resize("linear " + transform + " x2", x, {1, 3, 10, 12}, {1, 1, 2, 2}, attrs);
    resize("linear " + transform + " 5x6 -> 8x3", x, {1, 3, 8, 3}, {}, attrs);
    const Attributes cubic = {{"mode", std::string("cubic")}, {"coordinate_transformation_mode", transform}};
    resize("cubic " + transform + " x2", x, {1, 3, 10, 12}, {1, 1, 2, 2}, cubic);
    resize("cubic " + transform + " 5x6 -> 4x9", x, {1, 3, 4, 9}, {}, cubic);
  }
  resize("linear pytorch_half_pixel to 1x1", x, {1, 3, 1, 1}, {},
         {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}});
  resize("linear fractional scale 1.5", {1, 2, 4, 4}, {1, 2, 6, 6}, {1, 1, 1.5, 1.5}, {{"mode", std::string("linear")}});
  resize("cubic a=-0.5 exclude_outside", x, {1, 3, 9, 11}, {},
         {{"mode", std::string("cubic")}, {"cubic_coeff_a", -0.5}, {"exclude_outside", int64_t{1}}});
  resize("linear on a 2-D tensor", {6, 5}, {9, 10}, {}, {{"mode", std::string("linear")}});
  resize("nearest over the channel axis too", {1, 2, 3, 3}, {1, 4, 6, 6}, {1, 2, 2, 2}, {{"mode", std::string("nearest")}});
  resize("identity size", x, {1, 3, 5, 6}, {}, {{"mode", std::string("linear")}});

  const Shape p = {1, 3, 5, 6};
  t.add("pad", {.name = "constant zeros", .inputs = {in(p)}, .attrs = {{"pads", Ints{0, 0, 1, 2, 0, 0, 3, 1}}}});
  t.add("pad", {.name = "constant value 0.5", .inputs = {in(p)},
                .attrs = {{"pads", Ints{0, 0, 2, 1, 0, 0, 0, 2}}, {"value", 0.5}}});
  t.add("pad", {.name = "channels and batch", .inputs = {in({1, 2, 3, 3})}, .attrs = {{"pads", Ints{1, 2, 0, 0, 0, 1, 0, 0}}}});
  t.add("pad", {.name = "reflect", .inputs = {in(p)}, .attrs = {{"pads", Ints{0, 0, 2, 3, 0, 0, 1, 2}}, {"mode", std::string("reflect")}}});
  t.add("pad", {.name = "edge", .inputs = {in(p)}, .attrs = {{"pads", Ints{0, 0, 3, 1, 0, 0, 2, 4}}, {"mode", std::string("edge")}}});
  t.add("pad", {.name = "negative pads crop", .inputs = {in(p)}, .attrs = {{"pads", Ints{0, 0, -1, 2, 0, 0, 1, -2}}}});
  t.add("pad", {.name = "reflect with a crop", .inputs = {in(p)},
                .attrs = {{"pads", Ints{0, 0, 1, -1, 0, 0, -2, 2}}, {"mode", std::string("reflect")}}});
  t.add("pad", {.name = "edge on rank 2", .inputs = {in({4, 5})}, .attrs = {{"pads", Ints{2, 0, 1, 3}}, {"mode", std::string("edge")}}});
  t.add("pad", {.name = "rank 1", .inputs = {in({7})}, .attrs = {{"pads", Ints{3, 2}}}});
}

}  // namespace mt::optest
