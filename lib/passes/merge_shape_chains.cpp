// merge_shape_chains: a chain of reshapes (reshape, flatten, squeeze, unsqueeze) becomes one
// reshape to the final shape; a chain of transposes becomes one transpose, or nothing.
#include <numeric>

#include "lib/ops/registry.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

bool is_reshape_like(const Node& node) {
  return (node.op == "reshape" || node.op == "flatten" || node.op == "squeeze" || node.op == "unsqueeze") &&
         node.inputs.size() == 1 && node.outputs.size() == 1;
}

std::vector<int64_t> explicit_perm(const Node& node, size_t rank) {
  std::vector<int64_t> perm = attr_ints(node, "perm");
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.rbegin(), perm.rend(), 0);  // empty perm reverses the axes
  }
  return perm;
}

// Rewrites node `index` (the second of a pair) to read the first node's input directly; removes
// the first node when nothing else reads its output. Returns the index of the first node not yet
// scanned, or nullopt if the pair does not merge.
std::optional<size_t> merge_with_producer(Graph& graph, const GraphIndex& uses, size_t index, PassReport& report) {
  Node& second = graph.nodes[index];
  const bool candidate = is_reshape_like(second) || (second.op == "transpose" && second.outputs.size() == 1);
  if (!candidate || second.inputs.empty() || second.inputs[0].empty()) return std::nullopt;
  const auto first_index = uses.producer_index(second.inputs[0]);
  if (!first_index) return std::nullopt;
  const Node first = graph.nodes[*first_index];
  const std::string source = first.inputs.empty() ? std::string() : first.inputs[0];
  if (source.empty()) return std::nullopt;
  const std::string out = second.outputs[0];
  const std::string second_name = second.name;
  const bool first_dies = uses.uses(first.outputs[0]) == 1 && !uses.is_graph_output(first.outputs[0]);

  bool cancels = false;
  if (is_reshape_like(first) && is_reshape_like(second)) {
    second.op = "reshape";
    second.attrs = {{"shape", Attribute{graph.tensor(out).shape}}};
    second.inputs = {source};
  } else if (first.op == "transpose" && second.op == "transpose" && first.outputs.size() == 1) {
    const size_t rank = graph.tensor(source).shape.size();
    const auto p1 = explicit_perm(first, rank), p2 = explicit_perm(second, rank);
    std::vector<int64_t> combined(rank);
    for (size_t j = 0; j < rank; ++j) combined[j] = p1[static_cast<size_t>(p2[j])];
    second.attrs = {{"perm", Attribute{combined}}};
    second.inputs = {source};
    cancels = true;
    for (size_t j = 0; j < rank; ++j) cancels = cancels && combined[j] == static_cast<int64_t>(j);
  } else {
    return std::nullopt;
  }

  std::vector<std::string> after = {second_name};
  size_t next = index + 1;
  if (cancels && bypass_node(graph, index, source, out)) {
    after.clear();
    next = index;
  }
  if (first_dies) {
    // The first node is before the second, so its index is unchanged by the bypass above.
    erase_nodes(graph, {*first_index});
    --next;
    report.record(cancels && after.empty() ? "cancelled " + first.op + " chain" : "merged " + first.op + " chain",
                  {first.name, second_name}, after);
  } else {
    report.record("made " + second_name + " read " + first.name + "'s input", {second_name}, after);
  }
  return next;
}

}  // namespace

void merge_shape_chains(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) { return merge_with_producer(g, index, i, report); });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
