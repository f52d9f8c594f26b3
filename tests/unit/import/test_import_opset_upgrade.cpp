// Opsets 1 to 8: upgraded to opset 9 by ONNX's version converter at import, then translated as
// usual; a model the converter cannot upgrade is refused as unsupported, naming the op.
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

TEST_CASE("an opset 8 model is upgraded to 9 and the metadata records it") {
  OnnxBuilder b(8);
  b.input("x", {4}).output("y");
  b.node("Relu", {"x"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"relu"});
  const auto& source = g.metadata["source"];
  CHECK(source["opset"] == 9);
  CHECK(source["upgraded_from_opset"] == 8);
  check_close(run_graph(g, {{-1, 2, -3, 4}}), {0, 2, 0, 4});
}

TEST_CASE("a current model records no upgrade") {
  OnnxBuilder b(13);
  b.input("x", {4}).output("y");
  b.node("Relu", {"x"}, {"y"});
  Graph g = b.import();
  CHECK(g.metadata["source"]["opset"] == 13);
  CHECK_FALSE(g.metadata["source"].contains("upgraded_from_opset"));
}

TEST_CASE("opset 6 Add with the legacy broadcast attribute keeps its meaning after the upgrade") {
  // Before opset 7, Add broadcast only with broadcast=1 and aligned `axis`; the converter rewrites
  // it to numpy broadcasting. b (3) against x (2x3) along axis 1: y[i][j] = x[i][j] + b[j].
  OnnxBuilder b(6);
  b.input("x", {2, 3}).output("y");
  b.init("b", {3}, {10, 20, 30});
  auto& add = b.node("Add", {"x", "b"}, {"y"});
  attr_int(add, "broadcast", 1);
  Graph g = b.import();
  CHECK(g.metadata["source"]["upgraded_from_opset"] == 6);
  check_close(run_graph(g, {{1, 2, 3, 4, 5, 6}}), {11, 22, 33, 14, 25, 36});
}

TEST_CASE("opset 7 BatchNormalization and Dropout (is_test era) upgrade and run") {
  OnnxBuilder b(7);
  b.input("x", {1, 2, 1, 2}).output("y");
  b.init("scale", {2}, {1, 2}).init("bias", {2}, {0, 1}).init("mean", {2}, {1, 0}).init("var", {2}, {1, 4});
  auto& bn = b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"t"});
  attr_float(bn, "epsilon", 0);
  b.node("Dropout", {"t"}, {"y"});
  Graph g = b.import();
  // (x - mean) / sqrt(var) * scale + bias per channel.
  check_close(run_graph(g, {{1, 3, 2, 4}}), {0, 2, 3, 5});
}

TEST_CASE("a model the version converter cannot upgrade is unsupported, naming the op") {
  // ONNX has no adapter for Pad from opset 1 (its `paddings` attribute) to opset 2.
  OnnxBuilder b(1);
  b.input("x", {1, 4}).output("y");
  auto& pad = b.node("Pad", {"x"}, {"y"});
  attr_ints(pad, "paddings", {0, 1, 0, 1});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  const std::string message = e.what();
  CHECK(message.find("opset 1 is older than 9") != std::string::npos);
  CHECK(message.find("Pad") != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

// ONNX's converter dereferences the producer of every name without checking that one exists; its
// checker lets such graphs through. Found by the fuzzing stage (tests/data/fuzz/onnx/
// old-opset-undefined-output.onnx: opset 7, Relu(x) -> '%', graph output 'y'), which crashed mt-convert.
TEST_CASE("an old-opset graph that outputs or reads an undefined name is invalid input, not a crash") {
  OnnxBuilder b(7);
  b.input("x", {4}).output("y");
  b.node("Relu", {"x"}, {"t"});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("graph output 'y' is defined by no node, input or initializer") != std::string::npos);

  OnnxBuilder reads(7);
  reads.input("x", {4}).output("y");
  reads.node("Add", {"x", "missing"}, {"y"});
  Error e2 = import_error(reads);
  CHECK(e2.code() == ExitCode::invalid_input);
  CHECK(std::string(e2.what()).find("missing") != std::string::npos);  // ONNX's checker or ours names it
}

}  // namespace
}  // namespace mt::test
