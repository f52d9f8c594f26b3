// The backend interface: a backend checks which nodes it can run and turns a validated graph
// into an ExecutionPlan (kernels chosen, weights packed, memory planned) that runs it.
// reference, cpu (XNNPACK) and vulkan all implement it; the planner and the tools never
// depend on a particular backend.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/runtime/plan_options.h"
#include "lib/runtime/prepack.h"

namespace mt {

struct MemoryStats {
  size_t arena_bytes = 0;          // planned memory for intermediate tensors (shared by liveness)
  size_t intermediate_bytes = 0;   // sum of all intermediate tensor sizes (the cost without sharing)
  size_t weight_bytes = 0;         // constant tensors as stored in the model
  size_t packed_weight_bytes = 0;  // extra memory the backend uses for repacked weights
};

struct NodeTiming {
  size_t node_index = 0;  // into graph.nodes
  double seconds = 0;
};

// A graph ready to run on one backend. One plan is used from one thread at a time; to run a
// model from several threads, make one plan per thread from the same Graph (weights are shared
// through the graph's memory map; backends may keep their own packed copies).
class ExecutionPlan {
 public:
  virtual ~ExecutionPlan() = default;

  // Binds caller memory to graph input / output `index` (graph.inputs / graph.outputs order).
  // Data is row-major in the tensor's declared dtype, shape and layout. Bindings persist across
  // runs (reuse them: no copies, no allocation). An output left unbound is kept in plan memory.
  virtual void bind_input(size_t index, const void* data) = 0;
  virtual void bind_output(size_t index, void* data) = 0;
  virtual const void* output_data(size_t index) const = 0;

  // Runs the graph. Allocates nothing; every input must be bound.
  virtual void run() = 0;

  // With `on`, run() copies an input to the device only if bind_input was called for it since the
  // last run, so inputs stay on the device between runs (mt-bench): a caller that changes an input's
  // data in place then says so by binding it again. Off (the default), every run copies every
  // input. Backends that read inputs from caller memory (reference, cpu) have nothing to copy.
  virtual void reuse_unchanged_inputs(bool on) { (void)on; }

  virtual MemoryStats memory() const = 0;
  // Per-node timings of the last run when planned with profile = true.
  virtual std::vector<NodeTiming> last_profile() const { return {}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // nullopt if this backend runs the node; otherwise the reason in a few words
  // ("op not implemented", "dtype int8 not supported", "dilation 2 not supported").
  virtual std::optional<std::string> check_node(const Graph& graph, const Node& node) const = 0;
  // Throws Error(unsupported) listing every node check_node rejects before doing anything else.
  virtual std::unique_ptr<ExecutionPlan> plan(const Graph& graph, const PlanOptions& options) const = 0;

  // mt-prepack: whether this backend has a prepacked form, and the rewrite into it (weights in its
  // kernels' layouts, inputs as options say, metadata "backend" set to name()). The rewritten graph
  // runs on this backend only. The default has no prepacked form and throws Error(unsupported).
  virtual bool can_prepack() const { return false; }
  virtual void prepack(Graph& graph, const PrepackOptions& options) const;

  // The devices this backend runs on, for mt-run --list-devices: one block each, every line
  // starting with `indent`, or one line "unavailable: REASON" when the machine has none. Empty for
  // a backend that runs on the host's CPU (the default).
  virtual std::string devices(std::string_view indent) const {
    (void)indent;
    return {};
  }
  // "NAME (DRIVER INFO)" of device `device_index` (PlanOptions::gpu_index), for mt-bench's report;
  // throws Error(unsupported) with one line when there is no such device, so callers also use it to
  // check one exists before planning. Empty for a host backend (the default).
  virtual std::string describe(int device_index) const {
    (void)device_index;
    return {};
  }
};

struct UnsupportedNode {
  std::string node;
  std::string op;
  std::string reason;
};

// Every node of the graph that `backend` cannot run, in graph order.
std::vector<UnsupportedNode> check_graph(const Backend& backend, const Graph& graph);
// Throws Error(unsupported): "backend 'cpu' cannot run 3 nodes: conv_7 (conv2d: ...), ..." if any,
// or naming the backend a prepacked model was made for if that is another one.
void require_supported(const Backend& backend, const Graph& graph);

}  // namespace mt
