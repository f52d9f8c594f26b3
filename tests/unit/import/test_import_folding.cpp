// Shape-computing subgraphs fold to constants once input shapes are static, and what is left
// is only the run-time work.
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

TEST_CASE("Shape -> Gather -> Unsqueeze -> Concat -> Reshape folds to a reshape with a literal shape") {
  // The PyTorch export of x.view(x.size(0), -1).
  OnnxBuilder b;
  b.input("x", {"batch", 2, 3, 4}).output("y");
  b.init_i64("zero", {}, {0});
  b.init_i64("zero_axes", {1}, {0});
  b.init_i64("minus_one", {1}, {-1});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Gather", {"shape", "zero"}, {"batch"});
  b.node("Unsqueeze", {"batch", "zero_axes"}, {"batch_1d"});
  attr_int(b.node("Concat", {"batch_1d", "minus_one"}, {"target"}), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"}, "flatten_view");
  ImportOptions options;
  options.input_shapes["x"] = {5, 2, 3, 4};
  Graph g = b.import(options);
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op == "reshape");
  CHECK(g.nodes[0].name == "flatten_view");
  CHECK(std::get<std::vector<int64_t>>(g.nodes[0].attrs.at("shape")) == std::vector<int64_t>{5, 24});
  CHECK(g.tensor("y").shape == Shape{5, 24});
  // The shape subgraph's constants are gone from the model.
  for (const auto& tensor : g.tensors) CHECK_MESSAGE(!tensor.second.is_constant(), tensor.first);  // clang 14: no bindings in the message lambda
}

TEST_CASE("Shape honours opset 15 start and end") {
  OnnxBuilder b(15);
  b.input("x", {2, 3, 4, 5}).output("s");
  auto& shape = b.node("Shape", {"x"}, {"s"});
  attr_int(shape, "start", 1);
  attr_int(shape, "end", -1);
  Graph g = b.import();
  CHECK(g.nodes.empty());
  CHECK(constant_values<int64_t>(g, "s") == std::vector<int64_t>{3, 4});
}

TEST_CASE("interpolate-style size computation: Shape, Slice, Cast, Mul, Floor, Cast, Concat feed Resize sizes") {
  // sizes = concat(shape(x)[0:2], int64(floor(float(shape(x)[2:4]) * 2)))
  OnnxBuilder b(13);
  b.input("x", {1, 2, 3, 5}).output("y");
  b.init_i64("s0", {1}, {0});
  b.init_i64("s2", {1}, {2});
  b.init_i64("s4", {1}, {4});
  b.init("two", {}, {2.0f});
  b.node("Shape", {"x"}, {"shape"});
  b.node("Slice", {"shape", "s0", "s2"}, {"nc"});
  b.node("Slice", {"shape", "s2", "s4"}, {"hw"});
  attr_int(b.node("Cast", {"hw"}, {"hw_f"}), "to", onnx::TensorProto::FLOAT);
  b.node("Mul", {"hw_f", "two"}, {"hw_scaled"});
  b.node("Floor", {"hw_scaled"}, {"hw_floor"});
  attr_int(b.node("Cast", {"hw_floor"}, {"hw_i"}), "to", onnx::TensorProto::INT64);
  attr_int(b.node("Concat", {"nc", "hw_i"}, {"sizes"}), "axis", 0);
  auto& resize = b.node("Resize", {"x", "", "", "sizes"}, {"y"}, "up");
  attr_string(resize, "mode", "nearest");
  Graph g = b.import();
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op == "resize");
  CHECK(std::get<std::vector<int64_t>>(g.nodes[0].attrs.at("sizes")) == std::vector<int64_t>{1, 2, 6, 10});
  CHECK(g.nodes[0].attrs.count("scales") == 0);
  CHECK(g.tensor("y").shape == Shape{1, 2, 6, 10});
}

TEST_CASE("ConstantOfShape, Range, Equal, Where, ReduceProd and Expand evaluate on constants") {
  OnnxBuilder b(13);
  b.input("x", {2, 3}).output("y").output("r").output("w").output("p");
  b.init_i64("dims", {1}, {3});
  auto& fill = b.node("ConstantOfShape", {"dims"}, {"ones"});
  attr_tensor_f32(fill, "value", {1}, {1.0f});
  b.node("Add", {"x", "ones"}, {"y"});  // broadcasts [3] over [2,3]
  b.init_i64("start", {}, {1});
  b.init_i64("limit", {}, {10});
  b.init_i64("delta", {}, {3});
  b.node("Range", {"start", "limit", "delta"}, {"r"});
  b.init_i64("minus_one", {1}, {-1});
  b.init_i64("shape", {3}, {4, -1, 2});
  b.init_i64("ones3", {3}, {1, 1, 1});
  b.node("Equal", {"shape", "minus_one"}, {"is_neg"});
  b.node("Where", {"is_neg", "ones3", "shape"}, {"w"});
  b.init_i64("dims2", {2, 2}, {2, 3, 4, 5});
  auto& prod = b.node("ReduceProd", {"dims2"}, {"p"});
  attr_ints(prod, "axes", {1});
  attr_int(prod, "keepdims", 0);
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"add"});
  check_close(run_graph(g, {{0, 1, 2, 3, 4, 5}}), {1, 2, 3, 4, 5, 6});
  CHECK(constant_values<int64_t>(g, "r") == std::vector<int64_t>{1, 4, 7});
  CHECK(constant_values<int64_t>(g, "w") == std::vector<int64_t>{4, 1, 2});
  CHECK(constant_values<int64_t>(g, "p") == std::vector<int64_t>{6, 20});
  CHECK(g.tensor("p").shape == Shape{2});
}

TEST_CASE("constant IR ops fold through the reference kernels, and a fully constant model is all constants") {
  OnnxBuilder b(13);
  b.input("x", {2}).output("y").output("c");
  b.init("a", {2}, {1.0f, 4.0f});
  b.node("Sqrt", {"a"}, {"root"});
  b.node("Neg", {"root"}, {"c"});
  b.node("Mul", {"x", "root"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"mul"});
  CHECK(constant_values<float>(g, "c") == std::vector<float>{-1.0f, -2.0f});
  check_close(run_graph(g, {{3.0f, 3.0f}}), {3.0f, 6.0f});
}

TEST_CASE("folding never creates huge constants: a large Expand is left to run time, ConstantOfShape refused") {
  OnnxBuilder b(13);
  b.input("x", {1}).output("big").output("y");
  b.init("one", {}, {1.0f});
  b.init_i64("shape", {2}, {4096, 4097});  // 2^24 + 4096 elements
  b.node("Expand", {"one", "shape"}, {"big"});
  b.node("Relu", {"x"}, {"y"});
  Graph g = b.import();
  CHECK(producer(g, "big").op == "expand");
  CHECK(!g.tensor("big").is_constant());

  OnnxBuilder fill(13);
  fill.input("x", {1}).output("y");
  fill.init_i64("shape", {2}, {1 << 20, 1 << 20});
  fill.node("ConstantOfShape", {"shape"}, {"zeros"}, "zeros");
  fill.node("Add", {"x", "zeros"}, {"y"});
  Error e = import_error(fill);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find(
            "node 'zeros' (ConstantOfShape): would create a constant of shape 1048576x1048576") != std::string::npos);
}

TEST_CASE("nodes whose outputs are unused are removed, and unused constants with them") {
  OnnxBuilder b(13);
  b.input("x", {2}).output("y");
  b.init("w", {2}, {1.0f, 2.0f});
  b.node("Mul", {"x", "w"}, {"dead"});
  b.node("Relu", {"dead"}, {"dead2"});
  b.node("Sigmoid", {"x"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"sigmoid"});
  CHECK(!g.has_tensor("w"));
  CHECK(!g.has_tensor("dead"));
}

TEST_CASE("unnamed nodes are named <OpType>_<index>, duplicates made unique, extra mt nodes suffixed") {
  OnnxBuilder b(11);
  b.input("x", {2, 3, 4}).output("y").output("z");
  b.node("Relu", {"x"}, {"r"});
  b.node("Sigmoid", {"r"}, {"s"}, "act");
  b.node("Tanh", {"s"}, {"y"}, "act");
  b.node("Softmax", {"x"}, {"z"});  // opset 11, axis 1 of rank 3: flatten + softmax + reshape
  Graph g = b.import();
  CHECK(producer(g, "r").name == "Relu_0");
  CHECK(producer(g, "s").name == "act");
  CHECK(producer(g, "y").name == "act_1");
  CHECK(producer(g, "z").name == "Softmax_3");
  CHECK(producer(g, "z").op == "reshape");
  std::set<std::string> names;
  for (const auto& node : g.nodes) CHECK(names.insert(node.name).second);
  CHECK(names.count("Softmax_3/flatten"));
  CHECK(names.count("Softmax_3/softmax"));
}

}  // namespace
}  // namespace mt::test
