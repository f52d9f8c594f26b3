// passes::prepack, the driver of mt-prepack: BatchNorm folded and activations fused before the
// backend's own rewrite, metadata recorded, and the models and backends it must refuse.
#include "lib/passes/prepack.h"

#include "lib/passes/fuse.h"

#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;

// A backend whose prepacked form marks the graph and records what it was handed.
class MarkingBackend final : public Backend {
 public:
  std::string_view name() const override { return "marking"; }
  std::optional<std::string> check_node(const Graph&, const Node&) const override { return std::nullopt; }
  std::unique_ptr<ExecutionPlan> plan(const Graph&, const PlanOptions&) const override { return nullptr; }
  bool can_prepack() const override { return true; }
  void prepack(Graph& graph, const PrepackOptions& options) const override {
    ops_seen.clear();
    for (const auto& node : graph.nodes) ops_seen.push_back(node.op);
    layout_seen = options.input_layout;
    graph.metadata["backend"] = "marking";
  }
  mutable std::vector<std::string> ops_seen;
  mutable std::string layout_seen;
};

Graph conv_bn_relu() {
  GraphBuilder b;
  const auto c = b.node("conv2d", "conv", {b.input("x", {1, 3, 6, 6}), b.random("w", {4, 3, 3, 3}), b.random("b", {4})});
  const auto n = b.node("batch_norm", "bn",
                        {c, b.random("scale", {4}), b.random("shift", {4}), b.random("mean", {4}),
                         b.random("var", {4}, 0.5f, 2.0f)});
  return b.build({b.node("clamp", "relu6", {n}, {{"min", 0.0}, {"max", 6.0}})});
}

TEST_CASE("prepack folds BatchNorm and fuses the clamp before the backend's rewrite") {
  const Graph original = conv_bn_relu();
  Graph graph = original;
  const MarkingBackend backend;
  const passes::PrepackOutcome outcome = passes::prepack(graph, backend, PrepackOptions{.input_layout = "nhwc"});
  CHECK(outcome.nodes_before == 3);
  CHECK(outcome.nodes_after == 1);
  CHECK(outcome.batch_norms_folded == 1);
  CHECK(outcome.activations_fused == 1);
  CHECK(backend.ops_seen == std::vector<std::string>{"conv2d"});
  CHECK(backend.layout_seen == "nhwc");
  CHECK(graph.metadata["backend"] == "marking");
  const Node& conv = graph.nodes.front();
  CHECK(std::get<double>(conv.attrs.at("act_min")) == 0.0);
  CHECK(std::get<double>(conv.attrs.at("act_max")) == 6.0);
  Graph unmarked = graph;
  unmarked.metadata.erase("backend");
  test::check_same_results(original, unmarked);
}

TEST_CASE("prepack refuses a prepacked model and a backend without a prepacked form") {
  const MarkingBackend backend;
  Graph graph = conv_bn_relu();
  graph.metadata["backend"] = "cpu";
  try {
    passes::prepack(graph, backend, PrepackOptions{});
    FAIL("a prepacked model was prepacked again");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
    CHECK(std::string(error.what()) ==
          "the model is prepacked for backend 'cpu' already: run mt-prepack on the model from before it");
  }
  CHECK(backend.ops_seen.empty());
  const auto reference = make_reference_backend();
  CHECK(!reference->can_prepack());
  Graph plain = conv_bn_relu();
  try {
    passes::prepack(plain, *reference, PrepackOptions{});
    FAIL("the reference backend prepacked a model");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
    CHECK(std::string(error.what()) == "backend 'reference' has no prepacked form");
  }
  CHECK(plain.nodes.size() == 3);  // left as it was
}

TEST_CASE("mt-fuse refuses a prepacked model: its passes read weights row-major") {
  Graph graph = conv_bn_relu();
  graph.metadata["backend"] = "cpu";
  try {
    passes::fuse(graph, passes::FuseOptions{});
    FAIL("a prepacked model was fused");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
    CHECK(std::string(error.what()) ==
          "the model is prepacked for backend 'cpu': run mt-fuse on the model from before mt-prepack");
  }
  CHECK(graph.nodes.size() == 3);
}

}  // namespace
}  // namespace mt
