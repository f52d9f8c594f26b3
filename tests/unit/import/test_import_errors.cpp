// Importer errors: bad files, the ONNX checker, dynamic inputs and --input-shape, and the
// lists of unsupported ops and nodes.
#include <fstream>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

std::string write_file(const std::string& name, const std::string& bytes) {
  const auto path = (temp_dir() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

Error error_of(const std::string& path, const ImportOptions& options = {}) {
  try {
    import_onnx(path, options);
  } catch (const Error& e) {
    return e;
  }
  FAIL("importing ", path, " did not fail");
  throw std::logic_error("unreachable");
}

OnnxBuilder relu_model(std::vector<Dim> shape) {
  OnnxBuilder b;
  b.input("x", shape).output("y");
  b.node("Relu", {"x"}, {"y"}, "relu");
  return b;
}

TEST_CASE("a valid model imports with metadata naming its source") {
  Graph g = relu_model({1, 3, 4, 4}).import();
  CHECK(g.inputs == std::vector<std::string>{"x"});
  CHECK(g.outputs == std::vector<std::string>{"y"});
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op == "relu");
  CHECK(g.nodes[0].name == "relu");
  CHECK(g.tensor("y").shape == Shape{1, 3, 4, 4});
  const auto& source = g.metadata["source"];
  CHECK(source["format"] == "onnx");
  CHECK(source["opset"] == 13);
  CHECK(source["producer"] == "unit-test 1.0");
  CHECK(std::string(source["file"]).ends_with(".onnx"));
  CHECK(std::string(source["file"]).find('/') == std::string::npos);
}

TEST_CASE("bad files are invalid input errors naming the path") {
  const std::string missing = (temp_dir() / "missing.onnx").string();
  Error e = error_of(missing);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()) == missing + ": no such file");

  e = error_of(temp_dir().string());
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("is a directory") != std::string::npos);

  const std::string empty = write_file("empty.onnx", "");
  e = error_of(empty);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()) == empty + ": empty file, expected an ONNX model");

  const std::string text = write_file("text.onnx", "hello, this is not a protobuf\n");
  e = error_of(text);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).starts_with(text + ": not an ONNX model"));

  std::string bytes;
  relu_model({1, 3, 4, 4}).model().SerializeToString(&bytes);
  const std::string truncated = write_file("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  e = error_of(truncated);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).starts_with(truncated + ": not an ONNX model, or truncated"));
}

TEST_CASE("a model the ONNX checker rejects is invalid input") {
  OnnxBuilder b;
  b.input("x", {4}).output("y");
  b.node("Add", {"x", "undefined_tensor"}, {"y"});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("fails the ONNX checker") != std::string::npos);
  CHECK(std::string(e.what()).find("undefined_tensor") != std::string::npos);
  CHECK(std::string(e.what()).find('\n') == std::string::npos);
}

TEST_CASE("dynamic inputs without --input-shape: a usage error listing each with its symbolic shape") {
  OnnxBuilder b;
  b.input("image", {"batch", 3, "h", "w"}).input("scale", {1}).input("mask", {"batch", 1, 8, 8}).output("y");
  b.node("Mul", {"image", "scale"}, {"t"});
  b.node("Mul", {"t", "mask"}, {"y"});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::usage);
  const std::string message = e.what();
  CHECK(message.find("image: batch x 3 x h x w") != std::string::npos);
  CHECK(message.find("mask: batch x 1 x 8 x 8") != std::string::npos);
  CHECK(message.find("scale") == std::string::npos);  // static: not listed
  CHECK(message.find("--input-shape NAME:D0,D1,...") != std::string::npos);
  CHECK(message.find("--input-shape image:1,3,1,1") != std::string::npos);
}

TEST_CASE("--input-shape fixes symbolic dimensions") {
  OnnxBuilder b;
  b.input("image", {"batch", 3, "h", "w"}).output("y");
  b.node("Relu", {"image"}, {"y"});
  ImportOptions options;
  options.input_shapes["image"] = {2, 3, 5, 7};
  Graph g = b.import(options);
  CHECK(g.tensor("image").shape == Shape{2, 3, 5, 7});
  CHECK(g.tensor("y").shape == Shape{2, 3, 5, 7});
}

TEST_CASE("--input-shape may override a fixed dimension (with a warning)") {
  ImportOptions options;
  options.input_shapes["x"] = {2, 3, 4, 4};
  Graph g = relu_model({1, 3, 4, 4}).import(options);
  CHECK(g.tensor("x").shape == Shape{2, 3, 4, 4});
  CHECK(g.tensor("y").shape == Shape{2, 3, 4, 4});
}

TEST_CASE("--input-shape errors: unknown input names the real inputs, wrong rank names the declared shape") {
  OnnxBuilder b;
  b.input("image", {"batch", 3}).input("other", {2}).output("y");
  b.node("Add", {"image", "other"}, {"y"});
  ImportOptions options;
  options.input_shapes["imgae"] = {1, 3};
  Error e = import_error(b, options);
  CHECK(e.code() == ExitCode::usage);
  CHECK(std::string(e.what()).find("'imgae', which is not an input of the model; its inputs are: image, other") !=
        std::string::npos);

  options.input_shapes.clear();
  options.input_shapes["image"] = {1, 3, 1};
  e = import_error(b, options);
  CHECK(e.code() == ExitCode::usage);
  CHECK(std::string(e.what()).find("gives rank 3, but the model declares 'image' as batch x 3") != std::string::npos);
}

TEST_CASE("parse_input_shape") {
  auto [name, shape] = parse_input_shape("input:1,3,224,224");
  CHECK(name == "input");
  CHECK(shape == Shape{1, 3, 224, 224});
  auto [scoped, dims] = parse_input_shape("encoder:input:8");
  CHECK(scoped == "encoder:input");
  CHECK(dims == Shape{8});
  for (const char* bad :
       {"input", ":1,2", "input:", "input:1,,2", "input:1,x", "input:0,3", "input:-1", "input:1,2,"}) {
    INFO(bad);
    try {
      parse_input_shape(bad);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::usage);
      CHECK(std::string(e.what()).find("expected NAME:D0,D1,...") != std::string::npos);
    }
  }
}

TEST_CASE("unsupported op types: one error listing every type with its node count and names") {
  OnnxBuilder b;
  b.input("x", {"n", 8}).output("y");
  b.init_i64("k", {1}, {2});
  b.node("Multinomial", {"x"}, {"v1"}, "draw_a");
  b.node("Multinomial", {"v1"}, {"v2"}, "draw_b");
  b.node("Relu", {"v2"}, {"r"}, "relu");
  b.node("RandomUniformLike", {"r"}, {"y"});
  auto& custom = b.node("FusedThing", {"x"}, {"unused"}, "custom");
  custom.set_domain("com.example");
  auto* opset = b.model().add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  // Reported before the dynamic input is: the user learns everything that blocks the model.
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).ends_with(
      ": unsupported ONNX ops: Multinomial (2 nodes: draw_a, draw_b), RandomUniformLike (1 node: RandomUniformLike_3), "
      "com.example.FusedThing (1 node: custom)"));
}

TEST_CASE("a model importing only other domains is unsupported; one importing no opset is invalid") {
  OnnxBuilder b;
  b.input("x", {4}).output("y");
  b.node("Adagrad", {"x"}, {"y"}, "step").set_domain("ai.onnx.preview.training");
  b.model().mutable_opset_import(0)->set_domain("ai.onnx.preview.training");
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("imports only the domains ai.onnx.preview.training") != std::string::npos);

  b.model().clear_opset_import();
  e = import_error(b);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("imports no opset of the default ONNX domain") != std::string::npos);
}

TEST_CASE("unsupported uses of supported ops: every such node is listed") {
  OnnxBuilder b;
  b.input("x", {1, 1, 4, 4}).input("dims", {2}, onnx::TensorProto::INT64).output("y").output("z");
  b.init("scales", {4}, {1, 1, 2, 2});
  attr_string(b.node("Resize", {"x", "", "scales"}, {"p"}, "pool"), "mode", "area");
  b.node("Relu", {"p"}, {"y"}, "after_pool");  // blocked by the resize: not reported itself
  b.node("ConstantOfShape", {"dims"}, {"filled"}, "runtime_shape");
  attr_int(b.node("Cast", {"filled"}, {"z"}, "cast_after"), "to", onnx::TensorProto::FLOAT);
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  const std::string message = e.what();
  CHECK(message.find("2 nodes cannot be imported") != std::string::npos);
  CHECK(message.find("node 'pool' (Resize): mode 'area'") != std::string::npos);
  CHECK(message.find("node 'runtime_shape' (ConstantOfShape): input 'dims' (shape) must be known at conversion, but it "
                     "is computed at run time from graph input 'dims'") != std::string::npos);
  CHECK(message.find("give the value of dims at conversion with --input-value dims=FILE.npy") != std::string::npos);
  CHECK(message.find("after_pool") == std::string::npos);
  CHECK(message.find("cast_after") == std::string::npos);
}

TEST_CASE("graph inputs that are initializers are constants, not inputs") {
  OnnxBuilder b;
  b.input("x", {2}).input("bias", {2}).output("y");
  b.init("bias", {2}, {0.5f, -1.0f});
  b.node("Add", {"x", "bias"}, {"y"});
  Graph g = b.import();
  CHECK(g.inputs == std::vector<std::string>{"x"});
  CHECK(g.tensor("bias").is_constant());
  check_close(run_graph(g, {{1.0f, 2.0f}}), {1.5f, 1.0f});
}

}  // namespace
}  // namespace mt::test
