// check_graph / require_supported: every rejected node is listed, in graph order, exit code 4.
#include <doctest/doctest.h>

#include "lib/core/error.h"
#include "lib/runtime/backend.h"

namespace mt {
namespace {

// Accepts only relu.
class ReluOnlyBackend : public Backend {
 public:
  std::string_view name() const override { return "relu-only"; }
  std::optional<std::string> check_node(const Graph&, const Node& node) const override {
    if (node.op == "relu") return std::nullopt;
    return "op not implemented";
  }
  std::unique_ptr<ExecutionPlan> plan(const Graph&, const PlanOptions&) const override { return nullptr; }
};

Graph graph_of(std::vector<std::pair<std::string, std::string>> nodes) {
  Graph graph;
  for (auto& [name, op] : nodes) graph.nodes.push_back({.name = name, .op = op});
  return graph;
}

}  // namespace

TEST_CASE("check_graph lists rejected nodes in order") {
  ReluOnlyBackend backend;
  const Graph graph = graph_of({{"a", "relu"}, {"b", "conv2d"}, {"c", "relu"}, {"d", "gelu"}});
  const auto missing = check_graph(backend, graph);
  REQUIRE(missing.size() == 2);
  CHECK(missing[0].node == "b");
  CHECK(missing[0].op == "conv2d");
  CHECK(missing[0].reason == "op not implemented");
  CHECK(missing[1].node == "d");
}

TEST_CASE("require_supported throws unsupported naming every node") {
  ReluOnlyBackend backend;
  CHECK_NOTHROW(require_supported(backend, graph_of({{"a", "relu"}})));
  try {
    require_supported(backend, graph_of({{"a", "relu"}, {"b", "conv2d"}, {"d", "gelu"}}));
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
    CHECK(std::string(e.what()) ==
          "backend 'relu-only' cannot run 2 nodes: b (conv2d: op not implemented), d (gelu: op not implemented)");
  }
  try {
    require_supported(backend, graph_of({{"b", "conv2d"}}));
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "backend 'relu-only' cannot run 1 node: b (conv2d: op not implemented)");
  }
}

}  // namespace mt
