// Operands mt needs at conversion that a model takes as graph inputs: the refusal names those
// inputs (all of them, with the --input-value flag), value_inputs_needed() lists them, and pinned
// inputs become constants checked against the declared input.
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

ImportOptions::InputValue int64_value(const Shape& shape, const std::vector<int64_t>& values) {
  HostArray array{
      .dtype = DType::i64, .shape = shape, .data = ConstData::copy_of(values.data(), values.size() * sizeof(int64_t))};
  return {"value.npy", std::move(array)};
}

// y = Reshape(x, shape) with `shape` a graph input.
OnnxBuilder runtime_reshape() {
  OnnxBuilder b(13);
  b.input("x", {2, 3}).input("shape", {2}, onnx::TensorProto::INT64).output("y");
  b.node("Reshape", {"x", "shape"}, {"y"}, "r");
  return b;
}

TEST_CASE("a pinned input becomes a constant: the reshape is planned, the input leaves the model") {
  ImportOptions options;
  options.input_values.emplace("shape", int64_value({2}, {3, -1}));
  Graph g = runtime_reshape().import(options);
  CHECK(g.inputs == std::vector<std::string>{"x"});
  REQUIRE(g.nodes.size() == 1);
  CHECK(std::get<std::vector<int64_t>>(g.nodes[0].attrs.at("shape")) == std::vector<int64_t>{3, 2});
  CHECK(g.tensor("y").shape == Shape{3, 2});
  CHECK(g.metadata["source"]["input_values"] == nlohmann::json::array({"shape"}));
}

TEST_CASE("the refusal names every operand and graph input at once, with the flag") {
  OnnxBuilder b(13);
  b.input("x", {4, 6}).input("starts", {2}, onnx::TensorProto::INT64).input("ends", {2}, onnx::TensorProto::INT64);
  b.input("k", {1}, onnx::TensorProto::INT64).output("y").output("v");
  b.node("Slice", {"x", "starts", "ends"}, {"y"}, "s");
  b.node("TopK", {"x", "k"}, {"v", "i"}, "t");
  const Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  const std::string message = e.what();
  CHECK(message.find("node 's' (Slice): inputs 'starts' (starts), 'ends' (ends) must be known at conversion, but "
                     "they are computed at run time from graph inputs 'starts', 'ends'") != std::string::npos);
  CHECK(message.find("node 't' (TopK): input 'k' (K) must be known at conversion") != std::string::npos);
  CHECK(message.find("give the values of starts, ends, k at conversion with --input-value starts=FILE.npy "
                     "--input-value ends=FILE.npy --input-value k=FILE.npy") != std::string::npos);
  CHECK(value_inputs_needed(b.save(), {}) == std::vector<std::string>{"starts", "ends", "k"});
}

TEST_CASE("an operand computed from a graph input through other nodes names that input") {
  OnnxBuilder b(13);
  b.input("x", {2, 3}).input("n", {1}, onnx::TensorProto::INT64).output("y");
  b.init_i64("three", {1}, {3});
  b.node("Add", {"n", "three"}, {"shape"});
  b.node("Reshape", {"x", "shape"}, {"y"}, "r");
  const std::string message = import_error(b).what();
  CHECK(message.find("input 'shape' (shape) must be known at conversion, but it is computed at run time from "
                     "graph input 'n'") != std::string::npos);
  CHECK(value_inputs_needed(b.save(), {}) == std::vector<std::string>{"n"});
}

TEST_CASE("value_inputs_needed ignores the model's other refusals and is empty when none is needed") {
  OnnxBuilder b = runtime_reshape();
  b.input("z", {2}).output("w");
  b.node("Multinomial", {"z"}, {"w"});  // an op type mt lacks: import_onnx refuses that first
  CHECK(import_error(b).code() == ExitCode::unsupported);
  CHECK(value_inputs_needed(b.save(), {}) == std::vector<std::string>{"shape"});

  OnnxBuilder plain(13);
  plain.input("x", {2, 3}).output("y");
  plain.node("Relu", {"x"}, {"y"});
  CHECK(value_inputs_needed(plain.save(), {}).empty());
}

TEST_CASE("pinned values are checked against the declared input") {
  OnnxBuilder b = runtime_reshape();
  ImportOptions wrong_shape;
  wrong_shape.input_values.emplace("shape", int64_value({3}, {1, 2, 3}));
  Error e = import_error(b, wrong_shape);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("--input-value shape: value.npy holds int64 [3], but the model declares 'shape' "
                                   "as int64 [2]") != std::string::npos);

  ImportOptions wrong_dtype;
  HostArray floats{.dtype = DType::f32, .shape = {2}, .data = ConstData::allocate(8)};
  wrong_dtype.input_values.emplace("shape", ImportOptions::InputValue{"f.npy", floats});
  e = import_error(b, wrong_dtype);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("f.npy holds float32 [2]") != std::string::npos);

  ImportOptions unknown;
  unknown.input_values.emplace("nope", int64_value({2}, {3, 2}));
  e = import_error(b, unknown);
  CHECK(e.code() == ExitCode::usage);
  CHECK(std::string(e.what()).find("--input-value names 'nope', which is not an input of the model; its inputs are: "
                                   "x, shape") != std::string::npos);

  ImportOptions both;
  both.input_values.emplace("shape", int64_value({2}, {3, 2}));
  both.input_shapes["shape"] = {2};
  e = import_error(b, both);
  CHECK(e.code() == ExitCode::usage);
  CHECK(std::string(e.what()).find("is given both --input-shape and --input-value") != std::string::npos);
}

TEST_CASE("a symbolic dimension takes the pinned value's size") {
  OnnxBuilder b(13);
  b.input("x", {2, 3}).input("axes", {"n"}, onnx::TensorProto::INT64).output("y");
  b.node("Unsqueeze", {"x", "axes"}, {"y"});
  ImportOptions options;
  options.input_values.emplace("axes", int64_value({2}, {0, 3}));
  Graph g = b.import(options);
  CHECK(g.tensor("y").shape == Shape{1, 2, 3, 1});
}

TEST_CASE("an operand computed from constants by a node mt leaves unevaluated names that node") {
  // Expand of a scalar to 5000 values stays a node (the folding size limit); the slice of it that
  // Reshape reads is then computed at run time, from no graph input.
  OnnxBuilder b(13);
  b.input("x", {2, 3}).output("y");
  b.init_i64("three", {}, {3});
  b.init_i64("big", {1}, {5000});
  b.init_i64("zero", {1}, {0});
  b.init_i64("two", {1}, {2});
  b.node("Expand", {"three", "big"}, {"many"}, "spread");
  b.node("Slice", {"many", "zero", "two"}, {"shape"}, "first_two");
  b.node("Reshape", {"x", "shape"}, {"y"}, "r");
  const Error e = import_error(b);
  CHECK(std::string(e.what()).find("input 'shape' (shape) must be known at conversion, but it is computed at run time "
                                   "from node 'spread' (expand) of constants") != std::string::npos);
  CHECK(std::string(e.what()).find("--input-value") == std::string::npos);
  CHECK(value_inputs_needed(b.save(), {}).empty());
}

TEST_CASE("ReduceProd of a run-time tensor is the reduce_prod op; integer Neg of constants folds") {
  OnnxBuilder b(13);
  b.input("x", {2, 3}).output("y").output("z");
  b.init_i64("axis", {1}, {1});
  b.node("Neg", {"axis"}, {"minus_axis"});
  attr_ints(b.node("ReduceProd", {"x"}, {"y"}), "axes", {1});
  b.node("ConstantOfShape", {"axis"}, {"z_filled"});
  b.node("Unsqueeze", {"x", "minus_axis"}, {"z_unused"});
  b.node("Identity", {"z_filled"}, {"z"});
  Graph g = b.import();
  REQUIRE(!g.nodes.empty());
  CHECK(g.nodes[0].op == "reduce_prod");
  CHECK(g.tensor("y").shape == Shape{2, 1});
}

}  // namespace
}  // namespace mt::test
