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

// Bytes of the node's inputs (constants included: weights stream in too) and outputs.
double node_bytes(const Graph& graph, const Node& node) {
  double bytes = 0;
  for (const auto* names : {&node.inputs, &node.outputs})
    for (const std::string& name : *names)
      if (!name.empty() && graph.has_tensor(name)) bytes += static_cast<double>(graph.tensor(name).byte_size());
  return bytes;
}

size_t nodes_of(const NodeProfile&) { return 1; }
size_t nodes_of(const OpProfile& o) { return std::max<size_t>(1, o.timed_nodes); }

// A rate against the roofline (epilogue of profile.h): operations per byte times the bandwidth of
// the smallest cache level holding a node's bytes (per node, for an op type), capped by the
// compute peak.
template <typename Entry>
void set_percent(Entry& e, const PeakAt& peak) {
  const double bandwidth = peak.gbytes_per_second(e.bytes / static_cast<double>(nodes_of(e)));
  if (e.flops && e.bytes > 0) {
    const double memory_roof = *e.flops / e.bytes * bandwidth;
    e.memory_bound = memory_roof < peak.gflops_per_second;
    if (e.gflops_per_second)
      e.percent_of_peak = 100.0 * *e.gflops_per_second / std::min(memory_roof, peak.gflops_per_second);
  } else {
    e.memory_bound = true;
    if (e.gbytes_per_second) e.percent_of_peak = 100.0 * *e.gbytes_per_second / bandwidth;
  }
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
    entry.bytes = node_bytes(graph, node);
    entry.gbytes_per_second = rate(entry.bytes, entry.seconds);
    entry.memory_bound = !entry.flops;
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
    if (entry.flops) op.flops = op.flops.value_or(0.0);
    if (entry.seconds <= 0) continue;  // fused into another node's step: its work is counted there
    op.timed_nodes += 1;
    if (entry.flops) op.flops = *op.flops + *entry.flops;
    op.bytes += entry.bytes;
  }
  for (auto& [name, op] : by_op) {
    op.percent = profile.total_seconds > 0 ? 100.0 * op.seconds / profile.total_seconds : 0.0;
    op.gflops_per_second = rate(op.flops, op.seconds);
    op.gbytes_per_second = rate(op.bytes, op.seconds);
    op.memory_bound = !op.flops;
    profile.ops.push_back(std::move(op));
  }
  std::stable_sort(profile.ops.begin(), profile.ops.end(),
                   [](const OpProfile& a, const OpProfile& b) { return a.seconds > b.seconds; });
  return profile;
}

void with_peak(Profile& profile, const PeakAt& peak, const std::string& source) {
  profile.peak = peak;
  profile.peak_source = source;
  for (NodeProfile& n : profile.nodes) set_percent(n, peak);
  for (OpProfile& o : profile.ops) set_percent(o, peak);
}

}  // namespace mt::bench
