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

void Backend::prepack(Graph&, const PrepackOptions&) const {
  unsupported("backend '{}' has no prepacked form (mt-prepack)", name());
}

void require_supported(const Backend& backend, const Graph& graph) {
  // A prepacked model's tensors may be stored in layouts only its own backend reads.
  if (const auto target = packed_backend(graph); target && *target != backend.name())
    unsupported("the model was prepacked for backend '{}' and cannot run on '{}': run it on {}, or use the model "
                "from before mt-prepack", *target, backend.name(), *target);
  const auto missing = check_graph(backend, graph);
  if (missing.empty()) return;
  std::string list;
  for (const auto& node : missing)
    list += fmt::format("{}{} ({}: {})", list.empty() ? "" : ", ", node.node, node.op, node.reason);
  unsupported("backend '{}' cannot run {} node{}: {}", backend.name(), missing.size(), missing.size() == 1 ? "" : "s",
              list);
}

}  // namespace mt
