// Planning a graph for the cpu backend: tracks where every tensor lives (arena buffer, caller
// buffer or constant) and in which physical layout, inserts layout changes where a kernel needs
// one, and collects the steps. Op planners (kernel_table.h) talk to it through NodeContext.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/cpu/plan/kernel_paths.h"
#include "kernels/cpu/plan/layout.h"
#include "kernels/cpu/plan/step.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "kernels/cpu/plan/xnn_memory.h"
#include "lib/ir/graph.h"
#include "lib/runtime/backend.h"

namespace mt::cpu {

enum class BufferKind { arena, graph_input, constant };

// A block of memory the plan's steps read or write. Several tensors may view one buffer
// (reshape, squeeze, transpose whose bytes do not move).
struct Buffer {
  BufferKind kind = BufferKind::arena;
  size_t bytes = 0;
  void* data = nullptr;  // constants: from the start; arena: after memory planning; inputs: bound
  size_t first_step = SIZE_MAX, last_step = 0;  // liveness, in step indices
  bool claimed_by_output = false;
  bool read_by_xnnpack = false;  // XNNPACK may read XNN_EXTRA_BYTES past its end
};

// A tensor as stored by the plan.
struct Value {
  int buffer = -1;
  size_t offset = 0;  // bytes into the buffer
  DType dtype = DType::f32;
  Shape shape;        // logical (as declared in the graph)
  Layout layout;      // physical order
  Shape physical() const { return physical_shape(shape, layout); }
  int64_t count() const { return numel(shape); }
  size_t bytes() const { return static_cast<size_t>(count()) * dtype_size(dtype); }
};

// An anonymous mapping of `length` bytes (a multiple of the page size: huge_page_length) from a 2 MiB
// boundary on, zero, on transparent huge pages where the kernel grants them (MADV_HUGEPAGE): its first
// write costs one fault per 2 MiB instead of one per 4 KiB page (~1.8 us each on this VM). nullptr
// when out of memory; munmap(p, length) frees it.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;
size_t huge_page_length(size_t bytes);
void* map_huge_pages(size_t length);

// Zero-filled memory owned by the plan (repacked constants, the arena), 64-byte aligned and padded
// for XNNPACK's over-reads. From 2 MiB on it is its own anonymous mapping, zero without a memset and
// backed by transparent huge pages where the kernel grants them (madvise), its whole 2 MiB-aligned
// stretches: a 10 MB arena then costs a few page faults when first written, not 2500.
class OwnedBlock {
 public:
  explicit OwnedBlock(size_t bytes, std::string_view what = "a buffer of the cpu plan");
  void* data() const { return data_.get(); }

 private:
  struct Free {
    Free() : mapped(0) {}
    explicit Free(size_t mapped_bytes) : mapped(mapped_bytes) {}
    size_t mapped;  // bytes of an own mapping; 0: a heap block
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> data_;
};

struct PlannedStep {
  std::unique_ptr<Step> step;
  std::vector<std::pair<int, size_t>> refs;  // (buffer, byte offset) per pointer the step takes
  size_t node_index = 0;
};

// A float32 mul of x by a per-channel scale (a squeeze-excitation gate) left uncomputed: its only
// reader, a pointwise conv on our packed GEMM, folds the scale into its weights instead
// (binary.cpp decides, conv.cpp plans it).
struct ChannelGate {
  std::string x, scale;
};

// An int8 activation (a 256-entry table in plan memory) of tensor x left uncomputed: its only
// reader, a depthwise conv on the VNNI kernels, looks up each input row as it reads it
// (Int8DepthwiseFusion::input_lookup; ops_int8_elementwise.cpp decides, ops_int8_vnni.cpp plans it).
struct DeferredLookup {
  std::string x;
  const int8_t* table = nullptr;
};

// An int8 expanding 1x1 conv (node `node`, on the VNNI GEMM) left uncomputed: the depthwise conv that
// alone reads its output (through a DeferredLookup, if any) computes the rows it reads itself
// (Int8DepthwiseFusion::expand; ops_int8_vnni.cpp decides and plans it). x: the conv's input, NHWC.
struct DeferredExpand {
  size_t node = 0;
  Value x;
};

// Sums of an int8 tensor ([batch][slots][channels] int32 in `sums`) that the depthwise conv
// computing it formed as it wrote it, for a global average pool that reads the tensor to finish
// (int8_depthwise's `sums`, int8_global_avg_pool_of_sums).
struct PooledSums {
  Value sums;
  size_t slots = 1;
};

class PlanBuilder {
 public:
  PlanBuilder(const Graph& graph, const PlanOptions& options, ThreadPool* pool);

  // Plans every node, then the graph outputs (made row-major in caller-visible buffers).
  void plan_nodes();

  const Graph& graph;
  const PlanOptions& options;
  ThreadPool* pool;
  const KernelPaths paths;  // plan_paths(options): the kernel paths of our own this plan takes

  std::vector<Buffer> buffers;
  std::vector<PlannedStep> steps;
  std::vector<OwnedBlock> owned;
  size_t owned_bytes = 0;
  size_t xnn_packed_bytes = 0;      // estimate of the weights XNNPACK packed into its operators
  std::vector<int> input_buffers;   // per graph input
  std::vector<Value> output_values; // per graph output, row-major

  // --- used by op planners through NodeContext ---
  const Value& current(const std::string& tensor);
  Value convert(const std::string& tensor, const Layout& layout, size_t node_index);
  Value padded(const std::string& tensor, const Value& value, size_t node_index);
  int new_buffer(BufferKind kind, size_t bytes, void* data = nullptr);
  void define(const std::string& tensor, Value value);
  void add_step(std::unique_ptr<Step> step, std::vector<std::pair<int, size_t>> refs, size_t node_index);
  void* keep(size_t bytes);
  // Node `consumer`'s steps are the current node's (a plan-time fusion): plan_nodes skips it.
  void fuse(size_t consumer) { fused_.at(consumer) = true; }
  // The node that alone reads `tensor`, once, if it is not a graph output; else nullopt.
  std::optional<size_t> sole_consumer(const std::string& tensor) const;
  // Every node that reads `tensor`, once per read.
  const std::vector<size_t>& consumers(const std::string& tensor) const;
  // Whether steps planned now can read `tensor`: a graph input, a constant, or computed by the steps
  // planned so far (which may come from a node later in the graph that was fused into an earlier one).
  bool computed(const std::string& tensor) const;
  // Constant `tensor` is read at run time where the model holds it (a step keeps a pointer to it).
  void read_in_place(const std::string& tensor) { read_in_place_.insert(tensor); }
  // Tensors left as a ChannelGate for their only reader to apply.
  std::map<std::string, ChannelGate, std::less<>> channel_gates;
  // Tensors left as a DeferredLookup for their only reader to apply.
  std::map<std::string, DeferredLookup, std::less<>> deferred_lookups;
  // Tensors left as a DeferredExpand for the depthwise conv that reads them to compute.
  std::map<std::string, DeferredExpand, std::less<>> deferred_expands;
  // Tensors whose producer also formed their PooledSums.
  std::map<std::string, PooledSums, std::less<>> pooled_sums;

 private:
  void plan_outputs();
  void release_packed_constants(const Node& node);
  std::map<std::string, std::vector<Value>, std::less<>> values_;  // versions of each tensor by layout
  std::map<std::string, Value, std::less<>> padded_;                // XNNPACK-readable copies
  std::vector<bool> fused_;                                         // per node: planned by an earlier one
  std::unordered_map<std::string, std::vector<size_t>> consumers_;  // graph.consumers()
  std::set<std::string, std::less<>> read_in_place_;                // never paged out
};

// What one op planner sees: the node, its inputs in the layouts it asks for, its outputs.
class NodeContext {
 public:
  NodeContext(PlanBuilder& builder, size_t node_index);

  const Graph& graph() const { return builder_.graph; }
  const Node& node() const { return node_; }
  size_t node_index() const { return node_index_; }
  ThreadPool* pool() const { return builder_.pool; }
  int threads() const { return builder_.options.threads; }
  // The kernel paths of our own this plan takes (kernel_paths.h).
  const KernelPaths& paths() const { return builder_.paths; }
  // Whether 3x3 convs may run as Winograd (MT_CPU_WINOGRAD).
  bool winograd() const { return builder_.paths.winograd; }
  // Whether constant-weight GEMMs may run on packed_gemm.h instead of XNNPACK.
  bool packed_gemm() const { return builder_.paths.packed_gemm; }
  // Whether int8 convs and linears may run on int8_vnni.h's kernels instead of XNNPACK.
  bool int8_vnni() const { return builder_.paths.int8_vnni; }
  // Whether portable loops may run their AVX2+FMA compilation.
  bool avx2_fma() const { return builder_.paths.avx2_fma; }
  // Whether float32 depthwise convs may run on depthwise_conv.h instead of XNNPACK.
  bool depthwise() const { return builder_.paths.depthwise; }
  // Whether float32 convs of 1 to 4 input channels may run on stem_conv.h.
  bool stem_conv() const { return builder_.paths.stem_conv; }
  // Whether our float32 conv engines may absorb following nodes into their output stage (epilogue.h).
  bool conv_fusion() const { return builder_.paths.conv_fusion; }

  size_t num_inputs() const { return node_.inputs.size(); }
  bool has_input(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
  const TensorInfo& input_info(size_t i) const { return builder_.graph.tensor(node_.inputs.at(i)); }
  const TensorInfo& output_info(size_t i) const { return builder_.graph.tensor(node_.outputs.at(i)); }
  bool is_constant(size_t i) const { return has_input(i) && input_info(i).is_constant(); }
  // The bytes of a constant input, row-major in its logical shape.
  const ConstData& constant(size_t i) const { return input_info(i).data; }
  // The bytes of constant input i as the model stores them, for a step to read at run time: they
  // stay mapped (never paged out once planned, see PlanBuilder::release_packed_constants).
  const std::byte* constant_in_place(size_t i) {
    builder_.read_in_place(node_.inputs.at(i));
    return input_info(i).data.data();
  }

  // Input i where it is now (any layout).
  Value input(size_t i) { return builder_.current(node_.inputs.at(i)); }
  // Input i in `layout`, reordered (once, shared by all consumers) if it is stored otherwise.
  Value input(size_t i, const Layout& layout) { return builder_.convert(node_.inputs.at(i), layout, node_index_); }
  // Input i in `layout`, in memory XNNPACK may over-read (not a caller buffer or a mapped constant).
  Value xnn_input(size_t i, const Layout& layout);

  // A new arena buffer for output i, stored in `layout`.
  Value output(size_t i, const Layout& layout);

  // Plan-time fusion: this node's steps also compute node `consumer` (a later node that reads one
  // of this node's outputs), which is then not planned on its own.
  // The node that alone reads this node's output i, once, if the output is not a graph output.
  std::optional<size_t> sole_consumer(size_t i) const { return builder_.sole_consumer(node_.outputs.at(i)); }
  // Whether `tensor` can be read by this node's steps (computed before them).
  bool available(const std::string& tensor) const { return builder_.computed(tensor); }
  // Any tensor computed before this node, in `layout` (as input(i, layout)).
  Value tensor(const std::string& name, const Layout& layout) { return builder_.convert(name, layout, node_index_); }
  // Marks `consumer` planned by this node and gives a new arena buffer for its output i.
  Value fused_output(size_t consumer, size_t i, const Layout& layout);
  // The node that alone reads `tensor`, once, if it is not a graph output (chains of fusions).
  std::optional<size_t> sole_consumer_of(const std::string& tensor) const { return builder_.sole_consumer(tensor); }
  // Every node that reads `tensor`, once per read (a graph output may have none).
  const std::vector<size_t>& consumers_of(const std::string& tensor) const { return builder_.consumers(tensor); }
  // The context of a later node this node's steps compute too (fused), to plan its parts (its
  // packed weights, what it fuses in turn) from the same builder.
  NodeContext context_of(size_t consumer) const { return NodeContext(builder_, consumer); }
  // Marks `consumer` planned by this node without storing its outputs: their only reader is fused too.
  void fuse_through(size_t consumer) { builder_.fuse(consumer); }
  // Output i is `source`'s bytes seen with the output's shape and `layout` (no step, no copy).
  Value alias(size_t i, const Value& source, const Layout& layout, size_t extra_offset = 0);
  // A constant the planner computed into keep() memory, row-major.
  Value owned_constant(void* data, DType dtype, Shape shape);
  // Output 0 is `x` times the per-channel `scale`, left for its only reader to apply (ChannelGate):
  // this node plans no step.
  void defer_channel_gate(const std::string& x, const std::string& scale) {
    builder_.channel_gates[node_.outputs.at(0)] = ChannelGate{x, scale};
  }
  // Input i as a gate deferred by its producer, if it is one.
  const ChannelGate* channel_gate(size_t i) const { return find_in(builder_.channel_gates, node_.inputs.at(i)); }
  // Output 0 is `table` applied to `x`, left for its only reader to apply (DeferredLookup): this
  // node plans no step. `table` must live as long as the plan (keep()).
  void defer_lookup(const std::string& x, const int8_t* table) {
    builder_.deferred_lookups[node_.outputs.at(0)] = DeferredLookup{x, table};
  }
  // Input i as a lookup deferred by its producer, if it is one.
  const DeferredLookup* deferred_lookup(size_t i) const {
    return find_in(builder_.deferred_lookups, node_.inputs.at(i));
  }
  // Output 0 is left for the depthwise conv that reads it to compute (DeferredExpand), from `x`,
  // this node's input: this node plans no step.
  void defer_expand(const Value& x) { builder_.deferred_expands[node_.outputs.at(0)] = DeferredExpand{node_index_, x}; }
  // `tensor` as an expanding conv deferred by its producer, if it is one.
  const DeferredExpand* deferred_expand_of(const std::string& tensor) const {
    return find_in(builder_.deferred_expands, tensor);
  }
  // `tensor`, computed by this node's steps, comes with `sums` for a global average pool.
  void provide_pooled_sums(const std::string& tensor, PooledSums sums) {
    builder_.pooled_sums[tensor] = std::move(sums);
  }
  // Input i's PooledSums, if its producer formed them.
  const PooledSums* pooled_sums(size_t i) const { return find_in(builder_.pooled_sums, node_.inputs.at(i)); }
  // Memory alive from the first to the last step that refers to it: scratch of this node's steps, or
  // values they hand to a later node's (PooledSums).
  Value scratch(size_t bytes);
  // Zero-filled memory owned by the plan (repacked constants); counted as packed weights.
  void* keep(size_t bytes) { return builder_.keep(bytes); }
  // Records roughly how many bytes of weights an XNNPACK operator packed (for memory()).
  void count_packed(size_t bytes) { builder_.xnn_packed_bytes += bytes; }

  // Adds a portable kernel step: fn(pointers, pool), pointers[k] = values[k]'s data.
  template <typename Fn>
  void add_kernel(const std::vector<Value>& values, Fn fn) {
    builder_.add_step(std::make_unique<KernelStep<Fn>>(std::move(fn), values.size()), refs(values), node_index_);
  }
  // Adds an XNNPACK operator step; setup(op, pointers, pool) returns the xnn_setup_* status. A
  // small operator runs on the calling thread alone (see XnnStep).
  template <typename Setup>
  void add_xnn(xnn_operator_t op, const std::vector<Value>& values, Setup setup) {
    XnnOperator owned_op(op);
    const bool on_caller = node_.outputs.empty() || output_info(0).byte_size() < kXnnOnCallerBytes;
    builder_.add_step(std::make_unique<XnnStep<Setup>>(std::move(owned_op), std::move(setup),
                                                       on_caller ? nullptr : xnnpack_pool(builder_.pool),
                                                       "setup of node '" + node_.name + "'"),
                      refs(values), node_index_);
  }
  // Adds a step of the planner's own making (several operators and kernels run as one node).
  void add_step(std::unique_ptr<Step> step, const std::vector<Value>& values) {
    builder_.add_step(std::move(step), refs(values), node_index_);
  }
  // An XNNPACK operator: create(args..., &op), XNNPACK initialised first (initialize_xnnpack: every
  // operator is created through these two). Throws Error(failure) naming the node and `call` where
  // create fails.
  template <typename Create, typename... Args>
  xnn_operator_t create_xnn(const char* call, Create create, Args... args) const {
    initialize_xnnpack();
    xnn_operator_t op = nullptr;
    check(create(args..., &op), call);
    return op;
  }
  // The same, null where XNNPACK refuses the operator (the caller plans a kernel of its own).
  template <typename Create, typename... Args>
  xnn_operator_t try_create_xnn(Create create, Args... args) const {
    initialize_xnnpack();
    xnn_operator_t op = nullptr;
    return create(args..., &op) == xnn_status_success ? op : nullptr;
  }

 private:
  // Throws Error(failure) naming the node if an xnn_create_* call failed.
  void check(xnn_status status, const char* call) const;
  static std::vector<std::pair<int, size_t>> refs(const std::vector<Value>& values);
  // What `map` holds for `tensor` (a deferral or the sums of a node before), or null.
  template <typename Map>
  static const typename Map::mapped_type* find_in(const Map& map, const std::string& tensor) {
    const auto it = map.find(tensor);
    return it == map.end() ? nullptr : &it->second;
  }
  PlanBuilder& builder_;
  size_t node_index_;
  const Node& node_;
};

}  // namespace mt::cpu
