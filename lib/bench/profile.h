// Per-node profiles of benchmark runs, aggregated: each node's mean time over the profiled runs
// with its share of the total, its GFLOP/s (ops with an operation count, lib/ops/flops.h: compute-
// bound) or GB/s (the others: memory-bound; bytes of its inputs and outputs), and, given the
// machine's peak (machine_peak.h), that rate as a share of the peak; the same summed per op type.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/bench/machine_peak.h"
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
  double bytes = 0;                         // of its inputs (constants included) and outputs
  std::optional<double> gbytes_per_second;  // bytes / seconds (1e9), when seconds > 0
  // Without an operation count; with a peak also when its operations per byte times the bandwidth
  // (of the smallest cache level holding its bytes) are below the compute peak (a roofline).
  bool memory_bound = false;
  // Of the roofline's limit: min(compute peak, operations per byte x bandwidth) for nodes with an
  // operation count, else of the bandwidth.
  std::optional<double> percent_of_peak;
};

struct OpProfile {
  std::string op;
  size_t nodes = 0;
  double seconds = 0;  // sum of its nodes' mean times
  double percent = 0;
  std::optional<double> flops;  // sum over its nodes that took time, when the op has a count
  std::optional<double> gflops_per_second;
  double bytes = 0;        // of the nodes that took time (not fused into another's step)
  size_t timed_nodes = 0;  // those nodes
  std::optional<double> gbytes_per_second;
  bool memory_bound = false;              // as NodeProfile's, for the op's nodes together
  std::optional<double> percent_of_peak;  // as NodeProfile's
};

struct Profile {
  size_t runs = 0;            // how many runs the means are over
  double total_seconds = 0;   // sum of all node means
  std::vector<NodeProfile> nodes;  // graph order
  std::vector<OpProfile> ops;      // by time, largest first
  std::optional<PeakAt> peak;      // the machine's, at the plan's thread count (with_peak)
  std::string peak_source;         // the peak file and when it was measured
};

// Aggregates the timings backends return from ExecutionPlan::last_profile(), one vector per run.
// A node that a run does not mention counts as 0 s in it; an index out of range is an
// Error(failure) (a backend bug). Throws if `runs` is empty.
Profile aggregate_profile(const Graph& graph, const std::vector<std::vector<NodeTiming>>& runs);

// Sets every node's and op's memory_bound and percent_of_peak against `peak` (measured as `source`
// says).
void with_peak(Profile& profile, const PeakAt& peak, const std::string& source);

}  // namespace mt::bench
