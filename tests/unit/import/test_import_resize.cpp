// Resize by opset (Upsample-9, Resize-10/11/13/18) and Pad by opset: the constant operands
// become mt's literal attributes with each version's coordinate rules.
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

template <typename T>
T attr(const Node& node, const std::string& name) {
  return std::get<T>(node.attrs.at(name));
}
using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

TEST_CASE("Upsample (opset 9) and Resize-10: asymmetric coordinates, nearest rounds down when enlarging") {
  for (const char* op : {"Upsample", "Resize"}) {
    INFO(op);
    OnnxBuilder b(std::string(op) == "Upsample" ? 9 : 10);
    b.input("x", {1, 1, 2, 2}).output("y");
    b.init("scales", {4}, {1, 1, 2, 3});
    b.node(op, {"x", "scales"}, {"y"});
    Graph g = b.import();
    REQUIRE(ops_of(g) == std::vector<std::string>{"resize"});
    const Node& n = g.nodes[0];
    CHECK(attr<Ints>(n, "sizes") == Ints{1, 1, 4, 6});
    CHECK(attr<Floats>(n, "scales") == Floats{1, 1, 2, 3});
    CHECK(attr<std::string>(n, "coordinate_transformation_mode") == "asymmetric");
    CHECK(attr<std::string>(n, "nearest_mode") == "floor");
    CHECK(attr<std::string>(n, "mode") == "nearest");
  }
  OnnxBuilder shrink(10);
  shrink.input("x", {1, 1, 4, 4}).output("y");
  shrink.init("scales", {4}, {1, 1, 0.5f, 0.5f});
  attr_string(shrink.node("Resize", {"x", "scales"}, {"y"}), "mode", "linear");
  Graph g = shrink.import();
  CHECK(attr<Ints>(g.nodes[0], "sizes") == Ints{1, 1, 2, 2});
  CHECK(attr<std::string>(g.nodes[0], "mode") == "linear");

  OnnxBuilder mixed(10);
  mixed.input("x", {1, 1, 4, 4}).output("y");
  mixed.init("scales", {4}, {1, 1, 0.5f, 2});
  mixed.node("Resize", {"x", "scales"}, {"y"}, "r");
  Error e = import_error(mixed);
  CHECK(e.code() == ExitCode::unsupported);
}

TEST_CASE("Resize-11 with scales: sizes computed, scales kept, attributes carried") {
  OnnxBuilder b(11);
  b.input("x", {1, 2, 3, 4}).output("y");
  b.init("roi", {0}, {});
  b.init("scales", {4}, {1, 1, 2, 1.5f});
  auto& r = b.node("Resize", {"x", "roi", "scales"}, {"y"});
  attr_string(r, "mode", "cubic");
  attr_string(r, "coordinate_transformation_mode", "align_corners");
  attr_float(r, "cubic_coeff_a", -0.5f);
  attr_int(r, "exclude_outside", 1);
  Graph g = b.import();
  const Node& n = g.nodes[0];
  CHECK(attr<Ints>(n, "sizes") == Ints{1, 2, 6, 6});
  CHECK(attr<Floats>(n, "scales") == Floats{1, 1, 2, 1.5});
  CHECK(attr<std::string>(n, "mode") == "cubic");
  CHECK(attr<std::string>(n, "coordinate_transformation_mode") == "align_corners");
  CHECK(attr<double>(n, "cubic_coeff_a") == -0.5);
  CHECK(attr<int64_t>(n, "exclude_outside") == 1);
  CHECK(g.tensor("y").shape == Shape{1, 2, 6, 6});

  // 5 x 1.5 = 7.5: ONNX's align_corners would divide by 6.5, PyTorch's (and mt's resize) by 6.
  OnnxBuilder fractional(11);
  fractional.input("x", {1, 2, 3, 5}).output("y");
  fractional.init("roi", {0}, {});
  fractional.init("scales", {4}, {1, 1, 2, 1.5f});
  attr_string(fractional.node("Resize", {"x", "roi", "scales"}, {"y"}, "r"), "coordinate_transformation_mode",
              "align_corners");
  const Error e = import_error(fractional);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("align_corners with scale 1.5 on axis 3 of length 5") != std::string::npos);
}

TEST_CASE("Resize-13 with sizes: no scales attribute; defaults half_pixel and round_prefer_floor") {
  OnnxBuilder b(13);
  b.input("x", {1, 1, 4, 4}).output("y");
  b.init_i64("sizes", {4}, {1, 1, 3, 8});
  b.node("Resize", {"x", "", "", "sizes"}, {"y"});
  Graph g = b.import();
  const Node& n = g.nodes[0];
  CHECK(attr<Ints>(n, "sizes") == Ints{1, 1, 3, 8});
  CHECK(n.attrs.count("scales") == 0);
  CHECK(attr<std::string>(n, "coordinate_transformation_mode") == "half_pixel");
  CHECK(attr<std::string>(n, "nearest_mode") == "round_prefer_floor");
}

TEST_CASE("Resize-18: axes and keep_aspect_ratio_policy") {
  OnnxBuilder b(18);
  b.input("x", {1, 1, 4, 8}).output("y");
  b.init_i64("sizes", {2}, {6, 6});
  auto& r = b.node("Resize", {"x", "", "", "sizes"}, {"y"});
  attr_ints(r, "axes", {2, -1});
  attr_string(r, "keep_aspect_ratio_policy", "not_larger");
  Graph g = b.import();
  // One scale fits both: min(6/4, 6/8) = 0.75.
  CHECK(attr<Ints>(g.nodes[0], "sizes") == Ints{1, 1, 3, 6});
  CHECK(attr<Floats>(g.nodes[0], "scales") == Floats{1, 1, 0.75, 0.75});
}

TEST_CASE("Resize errors: tf_crop_and_resize, antialias, both or neither of scales and sizes") {
  auto resize_error = [](int opset, const std::function<void(OnnxBuilder&)>& build) {
    OnnxBuilder b(opset);
    b.input("x", {1, 1, 4, 4}).output("y");
    build(b);
    return import_error(b);
  };
  Error e = resize_error(11, [](OnnxBuilder& b) {
    b.init("roi", {8}, {0, 0, 0, 0, 1, 1, 1, 1});
    b.init("scales", {4}, {1, 1, 2, 2});
    attr_string(b.node("Resize", {"x", "roi", "scales"}, {"y"}, "r"), "coordinate_transformation_mode",
                "tf_crop_and_resize");
  });
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'r' (Resize): coordinate_transformation_mode 'tf_crop_and_resize'") !=
        std::string::npos);

  e = resize_error(18, [](OnnxBuilder& b) {
    b.init("scales", {4}, {1, 1, 0.5f, 0.5f});
    attr_int(b.node("Resize", {"x", "", "scales"}, {"y"}, "r"), "antialias", 1);
  });
  CHECK(e.code() == ExitCode::unsupported);

  e = resize_error(13, [](OnnxBuilder& b) {
    b.init("scales", {4}, {1, 1, 2, 2});
    b.init_i64("sizes", {4}, {1, 1, 8, 8});
    b.node("Resize", {"x", "", "scales", "sizes"}, {"y"}, "r");
  });
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("needs exactly one of scales and sizes") != std::string::npos);
}

TEST_CASE("Pad: attributes before opset 11, inputs from 11, axes from 18; wrap is unsupported") {
  OnnxBuilder old(9);
  old.input("x", {1, 2}).output("y");
  auto& p = old.node("Pad", {"x"}, {"y"});
  attr_ints(p, "pads", {0, 1, 0, 2});
  attr_float(p, "value", 9.0f);
  Graph g = old.import();
  CHECK(attr<Ints>(g.nodes[0], "pads") == Ints{0, 1, 0, 2});
  check_close(run_graph(g, {{1, 2}}), {9, 1, 2, 9, 9});

  OnnxBuilder b(13);
  b.input("x", {1, 3}).output("y");
  b.init_i64("pads", {4}, {0, 1, 0, 1});
  attr_string(b.node("Pad", {"x", "pads"}, {"y"}), "mode", "reflect");
  g = b.import();
  CHECK(attr<std::string>(g.nodes[0], "mode") == "reflect");
  check_close(run_graph(g, {{1, 2, 3}}), {2, 1, 2, 3, 2});

  OnnxBuilder axes(18);
  axes.input("x", {2, 3}).output("y");
  axes.init_i64("pads", {2}, {1, 2});
  axes.init("value", {}, {-1.0f});
  axes.init_i64("axes", {1}, {-1});
  axes.node("Pad", {"x", "pads", "value", "axes"}, {"y"});
  g = axes.import();
  CHECK(attr<Ints>(g.nodes[0], "pads") == Ints{0, 1, 0, 2});
  CHECK(attr<double>(g.nodes[0], "value") == -1.0);
  CHECK(g.tensor("y").shape == Shape{2, 6});

  OnnxBuilder wrap(19);
  wrap.input("x", {2, 3}).output("y");
  wrap.init_i64("pads", {4}, {0, 1, 0, 1});
  attr_string(wrap.node("Pad", {"x", "pads"}, {"y"}, "p"), "mode", "wrap");
  Error e = import_error(wrap);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'p' (Pad): mode 'wrap'") != std::string::npos);
}

}  // namespace
}  // namespace mt::test
