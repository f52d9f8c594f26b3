// remove_dead_nodes: drops nodes whose results nobody reads, then tensors nothing refers to.
#include <fmt/format.h>

#include <unordered_set>

#include "lib/passes/passes.h"

namespace mt::passes {

void remove_dead_nodes(Graph& graph, PassReport& report) {
  // Walking backwards, a node is live if a graph output or a live node reads one of its outputs;
  // whole dead chains go in one sweep.
  std::unordered_set<std::string> needed(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> live(graph.nodes.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    for (const auto& out : node.outputs)
      if (needed.count(out)) live[i] = true;
    if (!live[i]) continue;
    for (const auto& in : node.inputs)
      if (!in.empty()) needed.insert(in);
  }
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (live[i]) {
      kept.push_back(std::move(graph.nodes[i]));
    } else {
      report.record("removed unused " + graph.nodes[i].op, {graph.nodes[i].name}, {});
    }
  }
  graph.nodes = std::move(kept);

  const size_t tensors_before = graph.tensors.size();
  std::vector<std::string> constants_before;
  for (const auto& [name, info] : graph.tensors)
    if (info.is_constant()) constants_before.push_back(name);
  graph.remove_unused_tensors();
  size_t dropped_constants = 0;
  for (const auto& name : constants_before) dropped_constants += !graph.has_tensor(name);
  if (tensors_before != graph.tensors.size())
    report.record(fmt::format("removed {} unused tensors ({} constants)", tensors_before - graph.tensors.size(),
                              dropped_constants),
                  {}, {});
}

}  // namespace mt::passes
