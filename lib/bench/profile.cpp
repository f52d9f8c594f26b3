#include "lib/bench/profile.h"

#include <algorithm>
#include <map>

#include "lib/core/error.h"
#include "lib/ops/flops.h"

namespace mt::bench {
namespace {

std::optional<double> rate(const std::optional<double>& flops, double seconds) {
  if (!flops || seconds <= 0) return std::nullopt;
  return *flops / seconds / 1e9;
}

}  // namespace

Profile aggregate_profile(const Graph& graph, const std::vector<std::vector<NodeTiming>>& runs) {
  if (runs.empty()) fail(ExitCode::failure, "internal: no profiled runs to aggregate");
  Profile profile;
  profile.runs = runs.size();
  std::vector<double> sums(graph.nodes.size(), 0.0);
  for (const auto& run : runs)
    for (const NodeTiming& timing : run) {
      if (timing.node_index >= graph.nodes.size())
        fail(ExitCode::failure, "internal: backend profile names node {} of a graph of {} nodes", timing.node_index,
             graph.nodes.size());
      sums[timing.node_index] += timing.seconds;
    }

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    NodeProfile entry{.index = i, .name = node.name, .op = node.op};
    if (!node.outputs.empty() && graph.has_tensor(node.outputs[0])) entry.output_shape = graph.tensor(node.outputs[0]).shape;
    entry.seconds = sums[i] / static_cast<double>(runs.size());
    entry.flops = node_flops(graph, node);
    entry.gflops_per_second = rate(entry.flops, entry.seconds);
    profile.total_seconds += entry.seconds;
    profile.nodes.push_back(std::move(entry));
  }

  std::map<std::string, OpProfile> by_op;
  for (NodeProfile& entry : profile.nodes) {
    entry.percent = profile.total_seconds > 0 ? 100.0 * entry.seconds / profile.total_seconds : 0.0;
    OpProfile& op = by_op[entry.op];
    op.op = entry.op;
    op.nodes += 1;
    op.seconds += entry.seconds;
    if (entry.flops) op.flops = op.flops.value_or(0.0) + *entry.flops;
  }
  for (auto& [name, op] : by_op) {
    op.percent = profile.total_seconds > 0 ? 100.0 * op.seconds / profile.total_seconds : 0.0;
    op.gflops_per_second = rate(op.flops, op.seconds);
    profile.ops.push_back(std::move(op));
  }
  std::stable_sort(profile.ops.begin(), profile.ops.end(),
                   [](const OpProfile& a, const OpProfile& b) { return a.seconds > b.seconds; });
  return profile;
}

}  // namespace mt::bench
