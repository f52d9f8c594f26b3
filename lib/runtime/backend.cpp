#include "lib/runtime/backend.h"

#include <fmt/format.h>

#include "lib/core/error.h"

namespace mt {

std::vector<UnsupportedNode> check_graph(const Backend& backend, const Graph& graph) {
  std::vector<UnsupportedNode> result;
  for (const auto& node : graph.nodes)
    if (auto reason = backend.check_node(graph, node)) result.push_back({node.name, node.op, std::move(*reason)});
  return result;
}

void require_supported(const Backend& backend, const Graph& graph) {
  const auto missing = check_graph(backend, graph);
  if (missing.empty()) return;
  std::string list;
  for (const auto& node : missing)
    list += fmt::format("{}{} ({}: {})", list.empty() ? "" : ", ", node.node, node.op, node.reason);
  unsupported("backend '{}' cannot run {} node{}: {}", backend.name(), missing.size(), missing.size() == 1 ? "" : "s",
              list);
}

}  // namespace mt
