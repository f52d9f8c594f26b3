#include "kernels/cpu/plan/cpu_plan.h"

#include <chrono>

#include "lib/core/error.h"
#include "lib/core/memory_limit.h"
#include "lib/ir/stored_layout.h"
#include "lib/runtime/memory_planner.h"

namespace mt::cpu {

CpuPlan::CpuPlan(const Graph& graph, const PlanOptions& options) : profile_(options.profile) {
  if (options.threads < 1) fail(ExitCode::usage, "--threads must be at least 1, got {}", options.threads);
  // One thread runs on the caller's thread: XNNPACK and the portable kernels take a null pool.
  if (options.threads > 1) {
    pool_ = std::make_unique<ThreadPool>(static_cast<size_t>(options.threads));
  }
  input_names_ = graph.inputs;
  node_count_ = graph.nodes.size();
  size_t unpacked = 0;  // weights stored in no cpu layout: packing may copy them
  for (const auto& [name, info] : graph.tensors) {
    if (!info.is_constant()) continue;
    constants_.push_back(info.data);
    stats_.weight_bytes += info.data.size();
    if (!parse_cpu_layout(info.layout)) unpacked += info.data.size();
  }
  // Packing copies the weights into XNNPACK's and our kernels' layouts; those mt-prepack stored so are
  // read in place.
  check_memory_available(unpacked, "packing the weights for the cpu backend");

  PlanBuilder builder(graph, options, pool_.get());
  builder.plan_nodes();
  buffers_ = std::move(builder.buffers);
  steps_ = std::move(builder.steps);
  owned_ = std::move(builder.owned);
  input_buffers_ = std::move(builder.input_buffers);
  outputs_ = std::move(builder.output_values);
  stats_.packed_weight_bytes = builder.owned_bytes + builder.xnn_packed_bytes;

  // Every arena buffer gets XNNPACK's over-read margin so that any kernel may read it.
  std::vector<TensorRequest> requests;
  std::vector<size_t> arena_buffers;
  for (size_t b = 0; b < buffers_.size(); ++b) {
    const Buffer& buffer = buffers_[b];
    if (buffer.kind != BufferKind::arena) continue;
    const size_t first = std::min(buffer.first_step, buffer.last_step);
    requests.push_back({buffer.bytes + XNN_EXTRA_BYTES, Lifetime{first, buffer.last_step}});
    arena_buffers.push_back(b);
    stats_.intermediate_bytes += buffer.bytes;
  }
  const MemoryPlan memory = plan_memory(requests);
  arena_ = OwnedBlock(memory.arena_bytes, "the planned arena (intermediate tensors)");
  stats_.arena_bytes = memory.arena_bytes;
  for (size_t r = 0; r < arena_buffers.size(); ++r)
    buffers_[arena_buffers[r]].data = static_cast<std::byte*>(arena_.data()) + memory.offsets[r];
  for (const Value& output : outputs_) arena_pointers_.push_back(buffers_[output.buffer].data);

  steps_of_buffer_.resize(buffers_.size());
  size_t max_refs = 0;
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (const auto& [buffer, offset] : steps_[s].refs) steps_of_buffer_[buffer].push_back(s);
    max_refs = std::max(max_refs, steps_[s].refs.size());
  }
  scratch_pointers_.resize(max_refs);
  // Steps that read a caller's input are bound when the caller binds it.
  stale_.assign(steps_.size(), false);
  for (size_t s = 0; s < steps_.size(); ++s) {
    bool ready = true;
    for (const auto& [buffer, offset] : steps_[s].refs) ready = ready && buffers_[buffer].data != nullptr;
    if (ready) {
      bind_step(s);
    } else {
      stale_[s] = true;
      any_stale_ = true;
    }
  }
  step_seconds_.assign(steps_.size(), 0.0);
}

CpuPlan::~CpuPlan() = default;

void CpuPlan::bind_step(size_t s) {
  const auto& refs = steps_[s].refs;
  for (size_t k = 0; k < refs.size(); ++k)
    scratch_pointers_[k] = static_cast<std::byte*>(buffers_[refs[k].first].data) + refs[k].second;
  steps_[s].step->bind(Pointers(scratch_pointers_.data(), refs.size()));
  stale_[s] = false;
}

void CpuPlan::point(size_t buffer, void* data) {
  if (buffers_[buffer].data == data) return;
  buffers_[buffer].data = data;
  for (size_t s : steps_of_buffer_[buffer]) stale_[s] = true;
  any_stale_ = any_stale_ || !steps_of_buffer_[buffer].empty();
}

void CpuPlan::bind_input(size_t index, const void* data) {
  if (index >= input_buffers_.size())
    fail(ExitCode::failure, "bind_input: index {} out of range ({} inputs)", index, input_buffers_.size());
  point(static_cast<size_t>(input_buffers_[index]), const_cast<void*>(data));
}

void CpuPlan::bind_output(size_t index, void* data) {
  if (index >= outputs_.size())
    fail(ExitCode::failure, "bind_output: index {} out of range ({} outputs)", index, outputs_.size());
  point(static_cast<size_t>(outputs_[index].buffer), data != nullptr ? data : arena_pointers_[index]);
}

const void* CpuPlan::output_data(size_t index) const {
  if (index >= outputs_.size())
    fail(ExitCode::failure, "output_data: index {} out of range ({} outputs)", index, outputs_.size());
  return static_cast<const std::byte*>(buffers_[outputs_[index].buffer].data) + outputs_[index].offset;
}

void CpuPlan::run() {
  for (size_t i = 0; i < input_buffers_.size(); ++i)
    if (buffers_[input_buffers_[i]].data == nullptr)
      fail(ExitCode::invalid_input, "input '{}' is not bound", input_names_[i]);
  if (any_stale_) {
    for (size_t s = 0; s < steps_.size(); ++s)
      if (stale_[s]) bind_step(s);
    any_stale_ = false;
  }
  ThreadPool* pool = pool_.get();
  if (!profile_) {
    for (PlannedStep& step : steps_) step.step->run(pool);
    return;
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    const auto start = std::chrono::steady_clock::now();
    steps_[s].step->run(pool);
    step_seconds_[s] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
}

std::vector<NodeTiming> CpuPlan::last_profile() const {
  if (!profile_) return {};
  // Layout changes and copies are charged to the node they serve.
  std::vector<NodeTiming> timings(node_count_);
  for (size_t n = 0; n < node_count_; ++n) timings[n].node_index = n;
  for (size_t s = 0; s < steps_.size(); ++s)
    if (steps_[s].node_index < node_count_) timings[steps_[s].node_index].seconds += step_seconds_[s];
  return timings;
}

}  // namespace mt::cpu
