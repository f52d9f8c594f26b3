// Per-node profiles of benchmark runs, aggregated: each node's mean time over the profiled runs
// with its share of the total and its GFLOP/s, and the same summed per op type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/runtime/backend.h"

namespace mt::bench {

struct NodeProfile {
  size_t index = 0;  // into graph.nodes
  std::string name;
  std::string op;
  Shape output_shape;            // of the node's first output
  double seconds = 0;            // mean over the profiled runs
  double percent = 0;            // of the sum over all nodes
  std::optional<double> flops;   // lib/ops/flops.h; nullopt for ops without a count
  std::optional<double> gflops_per_second;  // flops / seconds, when both are known and seconds > 0
};

struct OpProfile {
  std::string op;
  size_t nodes = 0;
  double seconds = 0;  // sum of its nodes' mean times
  double percent = 0;
  std::optional<double> flops;  // sum over its nodes, when the op has a count
  std::optional<double> gflops_per_second;
};

struct Profile {
  size_t runs = 0;            // how many runs the means are over
  double total_seconds = 0;   // sum of all node means
  std::vector<NodeProfile> nodes;  // graph order
  std::vector<OpProfile> ops;      // by time, largest first
};

// Aggregates the timings backends return from ExecutionPlan::last_profile(), one vector per run.
// A node that a run does not mention counts as 0 s in it; an index out of range is an
// Error(failure) (a backend bug). Throws if `runs` is empty.
Profile aggregate_profile(const Graph& graph, const std::vector<std::vector<NodeTiming>>& runs);

}  // namespace mt::bench
