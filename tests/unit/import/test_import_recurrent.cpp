// RNN, GRU and LSTM: one mt node with every output (those the ONNX node leaves out get fresh
// names), layout 1 as transposes around it, hidden_size taken from R when absent, and the refusals
// of what mt does not run (non-default activations, clip, input_forget).
#include <cmath>

#include "lib/ops/registry.h"
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

// A one-unit RNN: W = 2, R = 0.5, no bias, so H_t = tanh(2 x_t + 0.5 H_t-1).
OnnxBuilder one_unit_rnn(const std::vector<Dim>& x_shape, int64_t layout, const std::vector<std::string>& outputs) {
  OnnxBuilder b(14);
  b.input("x", x_shape);
  for (const auto& out : outputs)
    if (!out.empty()) b.output(out);
  b.init("w", {1, 1, 1}, {2.0f});
  b.init("r", {1, 1, 1}, {0.5f});
  auto& rnn = b.node("RNN", {"x", "w", "r"}, outputs, "rnn");
  attr_int(rnn, "hidden_size", 1);
  if (layout != 0) attr_int(rnn, "layout", layout);
  return b;
}

void add_activations(onnx::NodeProto& node, const std::vector<std::string>& names) {
  auto* a = new_attr(node, "activations", onnx::AttributeProto::STRINGS);
  for (const auto& name : names) a->add_strings(name);
}

std::string refusal(const OnnxBuilder& b) {
  const Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  return e.what();
}

}  // namespace

TEST_CASE("RNN layout 0: one rnn node, the left-out Y computed under a fresh name") {
  Graph g = one_unit_rnn({2, 1, 1}, 0, {"", "y_h"}).import();
  REQUIRE(ops_of(g) == std::vector<std::string>{"rnn"});
  REQUIRE(g.nodes[0].outputs.size() == 2);
  CHECK(g.nodes[0].outputs[1] == "y_h");
  CHECK_FALSE(g.nodes[0].outputs[0].empty());
  const double h1 = std::tanh(2 * 0.5), h2 = std::tanh(2 * 1.0 + 0.5 * h1);
  check_close(run_graph(g, {{0.5f, 1.0f}}), {static_cast<float>(h2)}, 1e-6);
}

TEST_CASE("RNN layout 1: X and the outputs transposed around a layout-0 rnn") {
  // Batch 2 of 2 steps each: [B, T, I].
  Graph g = one_unit_rnn({2, 2, 1}, 1, {"y", "y_h"}).import();
  CHECK(ops_of(g) == std::vector<std::string>{"transpose", "rnn", "transpose", "transpose"});
  CHECK(g.tensor("y").shape == Shape{2, 2, 1, 1});  // [B, T, D, H]
  CHECK(g.tensor("y_h").shape == Shape{2, 1, 1});   // [B, D, H]
  const std::vector<float> x{0.5f, 1.0f, -0.25f, 0.75f};
  auto step = [](double x_t, double h) { return std::tanh(2 * x_t + 0.5 * h); };
  const double a1 = step(0.5, 0), a2 = step(1.0, a1), b1 = step(-0.25, 0), b2 = step(0.75, b1);
  std::vector<float> y{static_cast<float>(a1), static_cast<float>(a2), static_cast<float>(b1), static_cast<float>(b2)};
  check_close(run_graph(g, {x}, 0), y, 1e-6);
  check_close(run_graph(g, {x}, 1), {static_cast<float>(a2), static_cast<float>(b2)}, 1e-6);
}

TEST_CASE("RNN without hidden_size: taken from R") {
  OnnxBuilder b = one_unit_rnn({1, 1, 1}, 0, {"y"});
  b.graph().mutable_node(0)->clear_attribute();
  Graph g = b.import();
  REQUIRE(ops_of(g) == std::vector<std::string>{"rnn"});
  CHECK(mt::attr_int(g.nodes[0], "hidden_size") == 1);
}

TEST_CASE("recurrent ops: the default activations spelled out are accepted, others refused by name") {
  OnnxBuilder spelled = one_unit_rnn({1, 1, 1}, 0, {"y"});
  add_activations(*spelled.graph().mutable_node(0), {"Tanh"});
  CHECK(ops_of(spelled.import()) == std::vector<std::string>{"rnn"});

  OnnxBuilder relu = one_unit_rnn({1, 1, 1}, 0, {"y"});
  add_activations(*relu.graph().mutable_node(0), {"Relu"});
  CHECK(refusal(relu).find("activations [Relu] are not supported; mt runs only the default [Tanh]") !=
        std::string::npos);

  OnnxBuilder clip = one_unit_rnn({1, 1, 1}, 0, {"y"});
  attr_float(*clip.graph().mutable_node(0), "clip", 3.0f);
  CHECK(refusal(clip).find("attribute 'clip' (cell clipping) is not supported") != std::string::npos);

  OnnxBuilder lstm(14);
  lstm.input("x", {1, 1, 1}).output("y");
  lstm.init("w", {1, 4, 1}, {1, 1, 1, 1});
  lstm.init("r", {1, 4, 1}, {1, 1, 1, 1});
  auto& node = lstm.node("LSTM", {"x", "w", "r"}, {"y"}, "lstm");
  attr_int(node, "hidden_size", 1);
  attr_int(node, "input_forget", 1);
  CHECK(refusal(lstm).find("input_forget=1 (coupled input and forget gates) is not supported") != std::string::npos);
}

}  // namespace mt::test
