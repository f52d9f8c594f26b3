#include "kernels/reference/reference_backend.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <set>
#include <unordered_map>

#include "lib/core/error.h"
#include "lib/core/memory_limit.h"
#include "lib/ops/eval/reference.h"
#include "lib/runtime/memory_planner.h"

namespace mt {
namespace {

using reference::ConstView;
using reference::MutView;

// Dtypes a reference kernel accepts beyond float32. Shape ops move elements by size, so any
// dtype works, and so does where; integer arithmetic exists for integer graphs and constant
// folding (see the op sets); comparisons and boolean ops take integers and bools (the logic
// kernels refuse float16).
const std::set<std::string, std::less<>> kAnyDtypeOps = {
    "cast", "concat", "expand", "flatten", "gather", "identity", "reshape", "slice", "split", "squeeze", "transpose",
    "unsqueeze", "where", "pad",
    // the index family (lib/ops/eval/index.cpp)
    "trilu", "tile", "gather_elements", "gather_nd", "scatter_elements", "scatter_nd", "one_hot",
    // the signal family's reverse_sequence moves elements too
    "reverse_sequence"};
const std::set<std::string, std::less<>> kIntegerOps = {"add", "sub", "mul", "div", "max",
                                                        "min", "neg", "abs", "cumsum"};
// Integer arithmetic on every integer dtype (int8 only without quantization parameters).
const std::set<std::string, std::less<>> kEveryIntegerOps = {"add", "sub", "mul", "div",       "max",
                                                             "min", "mod", "pow", "bit_shift", "clamp"};
const std::set<std::string, std::less<>> kLogicOps = {
    "equal",       "less",        "less_or_equal", "greater", "greater_or_equal", "logical_and", "logical_or",
    "logical_xor", "logical_not", "is_nan",        "is_inf"};

bool is_plain_integer(const TensorInfo& info) {
  return info.dtype == DType::i64 || info.dtype == DType::i32 || info.dtype == DType::u8 ||
         (info.dtype == DType::i8 && !info.quant.has_value());
}
// Ops with one int32 operand among float ones (their schemas say which): the recurrent ops' sequence_lens.
const std::set<std::string, std::less<>> kInt32OperandOps = {"rnn", "gru", "lstm"};
// float16 beyond the boundary casts: the ops exact when computed in float32 (lib/ops/eval/binary.cpp).
const std::set<std::string, std::less<>> kFloat16Ops = {"max", "min", "mod"};
// uint8 images: max pooling compares, so it needs no quantization parameters.
const std::set<std::string, std::less<>> kUint8Ops = {"max_pool2d"};
// Ops with float32 data and int64 or int32 index operands (the sample family).
const std::set<std::string, std::less<>> kIndexOperandOps = {"roi_align", "max_unpool"};
// Ops with float32 inputs and int64 index outputs.
const std::set<std::string, std::less<>> kIndexOutputOps = {"argmax", "argmin", "top_k", "non_max_suppression",
                                                            "max_pool2d_indices"};

std::optional<std::string> check_dtype(const Node& node, const TensorInfo& info, bool output) {
  if (info.dtype == DType::f32 || kAnyDtypeOps.count(node.op)) return std::nullopt;
  if (output && info.dtype == DType::i64 && kIndexOutputOps.count(node.op)) return std::nullopt;
  if ((info.dtype == DType::i64 || info.dtype == DType::i32) && kIntegerOps.count(node.op)) return std::nullopt;
  if (is_plain_integer(info) && kEveryIntegerOps.count(node.op)) return std::nullopt;
  if ((is_plain_integer(info) || info.dtype == DType::boolean) && kLogicOps.count(node.op)) return std::nullopt;
  if (info.dtype == DType::i32 && kInt32OperandOps.count(node.op)) return std::nullopt;
  if (info.dtype == DType::f16 && kFloat16Ops.count(node.op)) return std::nullopt;
  if (!output && (info.dtype == DType::i64 || info.dtype == DType::i32) && kIndexOperandOps.count(node.op))
    return std::nullopt;
  if (info.dtype == DType::u8 && kUint8Ops.count(node.op)) return std::nullopt;
  // Quantized ops: int8 data, int32 bias (lib/quant's scheme, lib/ops/eval/quantized.cpp).
  if ((info.dtype == DType::i8 || info.dtype == DType::i32) && reference::has_int8_kernel(node.op)) return std::nullopt;
  if (node.op == "quantize" || node.op == "dequantize") return std::nullopt;
  return fmt::format("dtype {} not supported", dtype_name(info.dtype));
}

// Where a tensor's bytes are during a run. Resolved to a pointer for each run, because bindings
// may change between runs.
struct Slot {
  enum Kind : uint8_t { constant, input, arena } kind = arena;
  size_t index = 0;    // constant: unused; input: graph input index; arena: byte offset
  int output = -1;     // graph output index when this tensor is one (its binding overrides the arena)
  const std::byte* constant_data = nullptr;
};

struct PlannedNode {
  reference::Kernel kernel = nullptr;
  const Node* node = nullptr;
  std::vector<int> input_slots;  // -1: absent optional input
  std::vector<int> output_slots;
  std::vector<ConstView> inputs;
  std::vector<MutView> outputs;
};

struct AlignedBuffer {
  void operator()(std::byte* p) const { std::free(p); }
};

class ReferencePlan : public ExecutionPlan {
 public:
  ReferencePlan(const Graph& graph, const PlanOptions& options) : graph_(graph), profile_(options.profile) {
    build();
  }

  void bind_input(size_t index, const void* data) override {
    if (index >= inputs_.size()) fail(ExitCode::failure, "internal: bind_input({}) on a graph with {} inputs", index, inputs_.size());
    inputs_[index] = data;
  }
  void bind_output(size_t index, void* data) override {
    if (index >= outputs_.size()) fail(ExitCode::failure, "internal: bind_output({}) on a graph with {} outputs", index, outputs_.size());
    outputs_[index] = data;
  }
  const void* output_data(size_t index) const override {
    if (index >= outputs_.size()) fail(ExitCode::failure, "internal: output_data({}) on a graph with {} outputs", index, outputs_.size());
    if (outputs_[index] != nullptr) return outputs_[index];
    return resolve_const(output_slot_[index]);
  }

  void run() override {
    for (size_t i = 0; i < inputs_.size(); ++i)
      if (inputs_[i] == nullptr) fail(ExitCode::usage, "graph input '{}' is not bound", graph_.inputs[i]);
    for (size_t n = 0; n < nodes_.size(); ++n) {
      PlannedNode& planned = nodes_[n];
      for (size_t i = 0; i < planned.inputs.size(); ++i)
        if (planned.input_slots[i] >= 0) planned.inputs[i].data = resolve_const(planned.input_slots[i]);
      for (size_t i = 0; i < planned.outputs.size(); ++i) planned.outputs[i].data = resolve_mut(planned.output_slots[i]);
      if (profile_) {
        const auto start = std::chrono::steady_clock::now();
        planned.kernel(*planned.node, planned.inputs, planned.outputs);
        timings_[n].seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      } else {
        planned.kernel(*planned.node, planned.inputs, planned.outputs);
      }
    }
    // Outputs no node writes (a graph input or a constant returned as is) are copied when bound.
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const Slot& slot = slots_[output_slot_[i]];
      if (outputs_[i] != nullptr && slot.kind != Slot::arena)
        std::memcpy(outputs_[i], resolve_const(output_slot_[i]), output_bytes_[i]);
    }
  }

  MemoryStats memory() const override { return stats_; }
  std::vector<NodeTiming> last_profile() const override { return profile_ ? timings_ : std::vector<NodeTiming>{}; }

 private:
  void build() {
    std::unordered_map<std::string, int> slot_of;
    auto add_slot = [&](const std::string& name, Slot slot) {
      slot_of.emplace(name, static_cast<int>(slots_.size()));
      slots_.push_back(slot);
    };
    for (size_t i = 0; i < graph_.inputs.size(); ++i) add_slot(graph_.inputs[i], {.kind = Slot::input, .index = i});
    for (const auto& [name, info] : graph_.tensors)
      if (info.is_constant()) {
        add_slot(name, {.kind = Slot::constant, .constant_data = info.data.data()});
        stats_.weight_bytes += info.data.size();
      }

    // Every tensor a node writes lives in the arena, graph outputs included (used when unbound).
    std::vector<TensorRequest> requests;
    std::vector<std::string> arena_names;
    for (const auto& entry : compute_lifetimes(graph_)) {
      if (entry.graph_input) continue;
      const size_t bytes = graph_.tensor(entry.name).byte_size();
      requests.push_back({.bytes = bytes, .lifetime = entry.lifetime});
      arena_names.push_back(entry.name);
      stats_.intermediate_bytes += bytes;
    }
    const MemoryPlan plan = plan_memory(requests);
    for (size_t i = 0; i < arena_names.size(); ++i) add_slot(arena_names[i], {.kind = Slot::arena, .index = plan.offsets[i]});
    stats_.arena_bytes = plan.arena_bytes;
    const size_t arena_size = std::max(plan.arena_bytes, kArenaAlignment);
    check_memory_available(arena_size, "the planned arena (intermediate tensors)");
    arena_.reset(static_cast<std::byte*>(std::aligned_alloc(kArenaAlignment, arena_size)));
    if (arena_ == nullptr) throw std::bad_alloc();
    std::memset(arena_.get(), 0, arena_size);

    inputs_.assign(graph_.inputs.size(), nullptr);
    outputs_.assign(graph_.outputs.size(), nullptr);
    for (size_t i = 0; i < graph_.outputs.size(); ++i) {
      const int slot = slot_of.at(graph_.outputs[i]);
      output_slot_.push_back(slot);
      output_bytes_.push_back(graph_.tensor(graph_.outputs[i]).byte_size());
      if (slots_[slot].kind == Slot::arena && slots_[slot].output < 0) slots_[slot].output = static_cast<int>(i);
    }

    for (size_t n = 0; n < graph_.nodes.size(); ++n) {
      const Node& node = graph_.nodes[n];
      PlannedNode planned{.kernel = reference::find_kernel(node.op), .node = &node};
      for (const auto& name : node.inputs) {
        planned.input_slots.push_back(name.empty() ? -1 : slot_of.at(name));
        planned.inputs.push_back(name.empty() ? ConstView{} : ConstView{.info = &graph_.tensor(name)});
      }
      for (const auto& name : node.outputs) {
        planned.output_slots.push_back(slot_of.at(name));
        planned.outputs.push_back(MutView{.info = &graph_.tensor(name)});
      }
      nodes_.push_back(std::move(planned));
      timings_.push_back({.node_index = n});
    }
  }

  const void* resolve_const(int slot_index) const {
    const Slot& slot = slots_[slot_index];
    switch (slot.kind) {
      case Slot::constant: return slot.constant_data;
      case Slot::input: return inputs_[slot.index];
      case Slot::arena: break;
    }
    if (slot.output >= 0 && outputs_[slot.output] != nullptr) return outputs_[slot.output];
    return arena_.get() + slot.index;
  }
  void* resolve_mut(int slot_index) const {
    const Slot& slot = slots_[slot_index];
    if (slot.output >= 0 && outputs_[slot.output] != nullptr) return outputs_[slot.output];
    return arena_.get() + slot.index;
  }

  Graph graph_;  // our own copy: nodes and tensor infos the views point at; constants share the model's bytes
  bool profile_ = false;
  std::vector<Slot> slots_;
  std::vector<PlannedNode> nodes_;
  std::vector<NodeTiming> timings_;
  std::unique_ptr<std::byte, AlignedBuffer> arena_;
  std::vector<const void*> inputs_;
  std::vector<void*> outputs_;
  std::vector<int> output_slot_;
  std::vector<size_t> output_bytes_;
  MemoryStats stats_;
};

class ReferenceBackend : public Backend {
 public:
  std::string_view name() const override { return "reference"; }

  std::optional<std::string> check_node(const Graph& graph, const Node& node) const override {
    if (reference::find_kernel(node.op) == nullptr) return "op not implemented";
    for (const auto* names : {&node.inputs, &node.outputs})
      for (const auto& name : *names) {
        if (name.empty()) continue;
        const TensorInfo& info = graph.tensor(name);
        if (!info.layout.empty()) return fmt::format("tensor '{}' has layout {} (prepacked for another backend)", name, info.layout);
        if (auto reason = check_dtype(node, info, names == &node.outputs)) return reason;
      }
    return std::nullopt;
  }

  std::unique_ptr<ExecutionPlan> plan(const Graph& graph, const PlanOptions& options) const override {
    require_supported(*this, graph);
    return std::make_unique<ReferencePlan>(graph, options);
  }
};

}  // namespace

std::unique_ptr<Backend> make_reference_backend() { return std::make_unique<ReferenceBackend>(); }

}  // namespace mt
