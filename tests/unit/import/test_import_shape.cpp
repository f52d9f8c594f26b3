// Data-movement rules: operands passed as tensors (or attributes, by opset) become literal mt
// attributes: Reshape, Flatten, Transpose, Split, Squeeze/Unsqueeze, Slice, Gather, Expand, Pad.
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

std::vector<int64_t> ints_attr(const Node& node, const std::string& name) {
  return std::get<std::vector<int64_t>>(node.attrs.at(name));
}

TEST_CASE("Reshape resolves 0 and -1, honours allowzero, and needs a constant shape") {
  OnnxBuilder b(14);
  b.input("x", {2, 3, 4}).output("y");
  b.init_i64("shape", {3}, {0, -1, 2});
  b.node("Reshape", {"x", "shape"}, {"y"});
  Graph g = b.import();
  CHECK(ints_attr(g.nodes[0], "shape") == std::vector<int64_t>{2, 6, 2});

  OnnxBuilder zero(14);
  zero.input("x", {0, 3}).output("y");
  zero.init_i64("shape", {2}, {3, 0});
  attr_int(zero.node("Reshape", {"x", "shape"}, {"y"}), "allowzero", 1);
  g = zero.import();
  CHECK(ints_attr(g.nodes[0], "shape") == std::vector<int64_t>{3, 0});

  OnnxBuilder bad(13);
  bad.input("x", {2, 3}).output("y");
  bad.init_i64("shape", {2}, {4, -1});
  bad.node("Reshape", {"x", "shape"}, {"y"}, "r");
  Error e = import_error(bad);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("node 'r' (Reshape): cannot reshape 2x3 to 4x-1") != std::string::npos);

  OnnxBuilder runtime(13);
  runtime.input("x", {2, 3}).input("s", {2}, onnx::TensorProto::INT64).output("y");
  runtime.node("Reshape", {"x", "s"}, {"y"}, "r");
  e = import_error(runtime);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("input 's' (shape) must be known at conversion, but it is computed at run time "
                                   "from graph input 's'") != std::string::npos);
}

TEST_CASE("Flatten normalises a negative axis; Transpose defaults to reversing") {
  OnnxBuilder b(13);
  b.input("x", {2, 3, 4}).output("f").output("t");
  attr_int(b.node("Flatten", {"x"}, {"f"}), "axis", -1);
  b.node("Transpose", {"x"}, {"t"});
  Graph g = b.import();
  CHECK(std::get<int64_t>(producer(g, "f").attrs.at("axis")) == 2);
  CHECK(g.tensor("f").shape == Shape{6, 4});
  CHECK(ints_attr(producer(g, "t"), "perm") == std::vector<int64_t>{2, 1, 0});
  CHECK(g.tensor("t").shape == Shape{4, 3, 2});
}

TEST_CASE("Split: attribute before 13, input from 13, equal parts when absent, opset 18 num_outputs") {
  OnnxBuilder old(11);
  old.input("x", {6, 2}).output("a").output("b");
  attr_ints(old.node("Split", {"x"}, {"a", "b"}), "split", {4, 2});
  Graph g = old.import();
  CHECK(ints_attr(g.nodes[0], "split") == std::vector<int64_t>{4, 2});
  CHECK(g.tensor("a").shape == Shape{4, 2});

  OnnxBuilder input(13);
  input.input("x", {2, 5}).output("a").output("b");
  input.init_i64("sizes", {2}, {1, 4});
  attr_int(input.node("Split", {"x", "sizes"}, {"a", "b"}), "axis", -1);
  g = input.import();
  CHECK(std::get<int64_t>(g.nodes[0].attrs.at("axis")) == 1);
  CHECK(ints_attr(g.nodes[0], "split") == std::vector<int64_t>{1, 4});

  OnnxBuilder equal(13);
  equal.input("x", {6}).output("a").output("b").output("c");
  equal.node("Split", {"x"}, {"a", "b", "c"});
  g = equal.import();
  CHECK(ints_attr(g.nodes[0], "split") == std::vector<int64_t>{2, 2, 2});
  std::vector<float> x{1, 2, 3, 4, 5, 6};
  check_close(run_graph(g, {x}, 2), {5, 6});

  OnnxBuilder uneven(18);
  uneven.input("x", {7}).output("a").output("b").output("c");
  attr_int(uneven.node("Split", {"x"}, {"a", "b", "c"}), "num_outputs", 3);
  g = uneven.import();
  CHECK(ints_attr(g.nodes[0], "split") == std::vector<int64_t>{3, 3, 1});
}

TEST_CASE("Squeeze and Unsqueeze axes: attribute before 13, input from 13; Squeeze without axes takes all 1s") {
  OnnxBuilder old(11);
  old.input("x", {1, 3, 1}).output("s").output("u");
  attr_ints(old.node("Squeeze", {"x"}, {"s"}), "axes", {-1});
  attr_ints(old.node("Unsqueeze", {"x"}, {"u"}), "axes", {0, 4});
  Graph g = old.import();
  CHECK(ints_attr(producer(g, "s"), "axes") == std::vector<int64_t>{2});
  CHECK(g.tensor("s").shape == Shape{1, 3});
  CHECK(g.tensor("u").shape == Shape{1, 1, 3, 1, 1});

  OnnxBuilder b(13);
  b.input("x", {1, 3, 1}).output("s").output("u");
  b.init_i64("axes", {1}, {1});
  b.node("Squeeze", {"x"}, {"s"});
  b.node("Unsqueeze", {"x", "axes"}, {"u"});
  g = b.import();
  CHECK(ints_attr(producer(g, "s"), "axes") == std::vector<int64_t>{0, 2});
  CHECK(g.tensor("s").shape == Shape{3});
  CHECK(g.tensor("u").shape == Shape{1, 1, 3, 1});
}

TEST_CASE("Slice: attributes in opset 9, inputs from 10 with steps") {
  OnnxBuilder old(9);
  old.input("x", {4, 6}).output("y");
  auto& s = old.node("Slice", {"x"}, {"y"});
  attr_ints(s, "starts", {1});
  attr_ints(s, "ends", {1000});
  attr_ints(s, "axes", {1});
  Graph g = old.import();
  CHECK(ints_attr(g.nodes[0], "starts") == std::vector<int64_t>{1});
  CHECK(ints_attr(g.nodes[0], "axes") == std::vector<int64_t>{1});
  CHECK(g.tensor("y").shape == Shape{4, 5});

  OnnxBuilder b(13);
  b.input("x", {6}).output("y");
  b.init_i64("starts", {1}, {-1});
  b.init_i64("ends", {1}, {INT64_MIN});
  b.init_i64("steps", {1}, {-2});
  b.node("Slice", {"x", "starts", "ends", "", "steps"}, {"y"});
  g = b.import();
  CHECK(ints_attr(g.nodes[0], "steps") == std::vector<int64_t>{-2});
  CHECK(g.nodes[0].attrs.count("axes") == 0);
  check_close(run_graph(g, {{0, 1, 2, 3, 4, 5}}), {5, 3, 1});
}

TEST_CASE("Gather and Expand") {
  OnnxBuilder b(13);
  b.input("x", {3, 2}).output("g").output("e");
  b.init_i64("idx", {2}, {2, -3});
  b.init_i64("shape", {3}, {2, 1, 1});
  attr_int(b.node("Gather", {"x", "idx"}, {"g"}), "axis", 0);
  b.node("Expand", {"x", "shape"}, {"e"});
  Graph g = b.import();
  check_close(run_graph(g, {{1, 2, 3, 4, 5, 6}}, 0), {5, 6, 1, 2});
  CHECK(ints_attr(producer(g, "e"), "shape") == std::vector<int64_t>{2, 1, 1});
  CHECK(g.tensor("e").shape == Shape{2, 3, 2});
}

TEST_CASE("Concat keeps its axis") {
  OnnxBuilder b(13);
  b.input("a", {2, 1}).input("b", {2, 2}).output("y");
  attr_int(b.node("Concat", {"a", "b"}, {"y"}), "axis", -1);
  Graph g = b.import();
  check_close(run_graph(g, {{1, 2}, {3, 4, 5, 6}}), {1, 3, 4, 2, 5, 6});
}

}  // namespace
}  // namespace mt::test
