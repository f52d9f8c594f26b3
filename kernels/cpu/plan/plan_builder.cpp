#include "kernels/cpu/plan/plan_builder.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/cpu/plan/kernel_table.h"
#include "kernels/cpu/engines/depthwise_conv.h"
#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/engines/stem_conv.h"
#include "kernels/cpu/engines/permute.h"
#include "kernels/cpu/plan/prepack.h"
#include "kernels/cpu/engines/winograd_conv.h"
#include "lib/core/error.h"
#include "lib/core/memory_limit.h"

namespace mt::cpu {

void check_xnn(xnn_status status, const char* what) {
  if (status != xnn_status_success) fail(ExitCode::failure, "XNNPACK {} failed (status {})", what, static_cast<int>(status));
}

size_t huge_page_length(size_t bytes) {
  static const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

void* map_huge_pages(size_t length) {
  // A mapping from a 2 MiB boundary on: over-map by 2 MiB, then give back what lies before it.
  void* mapped = mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  auto* start = static_cast<std::byte*>(mapped);
  auto* aligned =
      reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(start) + kHugePageBytes - 1) & ~(kHugePageBytes - 1));
  if (aligned > start) munmap(start, static_cast<size_t>(aligned - start));
  if (const size_t tail = static_cast<size_t>(start + length + kHugePageBytes - (aligned + length)); tail > 0)
    munmap(aligned + length, tail);
  madvise(aligned, length, MADV_HUGEPAGE);  // a hint: without THP the block stays in small pages
  return aligned;
}

OwnedBlock::OwnedBlock(size_t bytes, std::string_view what) {
  // Rounded up to the alignment (aligned_alloc requires it), plus XNNPACK's over-read margin.
  const size_t size = (bytes + XNN_EXTRA_BYTES + 63) / 64 * 64;
  check_memory_available(size, what);
  if (size >= kHugePageBytes) {
    const size_t length = huge_page_length(size);
    void* mapped = map_huge_pages(length);
    if (mapped == nullptr) fail(ExitCode::failure, "out of memory mapping {} bytes", size);
    data_ = std::unique_ptr<void, Free>(mapped, Free{length});
    return;
  }
  void* p = std::aligned_alloc(64, size);
  if (p == nullptr) fail(ExitCode::failure, "out of memory allocating {} bytes", size);
  std::memset(p, 0, size);
  data_.reset(p);
}

void OwnedBlock::Free::operator()(void* p) const {
  if (mapped > 0) munmap(p, mapped);
  else std::free(p);
}

PlanBuilder::PlanBuilder(const Graph& graph_, const PlanOptions& options_, ThreadPool* pool_)
    : graph(graph_),
      options(options_),
      pool(pool_),
      paths(plan_paths(options_)),
      fused_(graph_.nodes.size(), false),
      consumers_(graph_.consumers()) {
  for (const auto& name : graph.inputs) {
    const TensorInfo& info = graph.tensor(name);
    const int buffer = new_buffer(BufferKind::graph_input, info.byte_size());
    input_buffers.push_back(buffer);
    // Callers hand over data in the input's declared layout (NHWC after mt-prepack --input-layout nhwc).
    define(name, Value{.buffer = buffer, .dtype = info.dtype, .shape = info.shape, .layout = input_layout(info)});
  }
}

int PlanBuilder::new_buffer(BufferKind kind, size_t bytes, void* data) {
  buffers.push_back(Buffer{.kind = kind, .bytes = bytes, .data = data});
  return static_cast<int>(buffers.size() - 1);
}

void PlanBuilder::define(const std::string& tensor, Value value) {
  value.layout = canonical_layout(value.shape, value.layout);
  values_[tensor].push_back(std::move(value));
}

const Value& PlanBuilder::current(const std::string& tensor) {
  auto it = values_.find(tensor);
  if (it != values_.end()) return it->second.front();
  const TensorInfo& info = graph.tensor(tensor);
  if (!info.is_constant()) fail(ExitCode::failure, "internal: tensor '{}' is read before it is computed", tensor);
  const int buffer = new_buffer(BufferKind::constant, info.byte_size(), const_cast<std::byte*>(info.data.data()));
  define(tensor, Value{.buffer = buffer, .dtype = info.dtype, .shape = info.shape,
                       .layout = identity_layout(info.shape.size())});
  return values_[tensor].front();
}

Value PlanBuilder::convert(const std::string& tensor, const Layout& layout, size_t node_index) {
  const Value source = current(tensor);
  for (const Value& version : values_[tensor]) {
    if (same_memory_order(version.shape, version.layout, layout)) {
      Value result = version;
      result.layout = canonical_layout(result.shape, layout);
      return result;
    }
  }
  std::vector<int> perm(layout.size());
  for (size_t k = 0; k < layout.size(); ++k) perm[k] = physical_axis(source.layout, layout[k]);
  Permute permute(source.physical(), perm, dtype_size(source.dtype));
  Value result = source;
  result.offset = 0;
  result.layout = layout;
  const Buffer& from = buffers[source.buffer];
  if (from.kind == BufferKind::constant) {
    // Constants are reordered once, here, into plan-owned memory.
    void* data = keep(source.bytes());
    permute.run(static_cast<const std::byte*>(from.data) + source.offset, data, nullptr);
    result.buffer = new_buffer(BufferKind::constant, source.bytes(), data);
  } else {
    result.buffer = new_buffer(BufferKind::arena, source.bytes());
    auto step = [permute](Pointers p, ThreadPool* pool) { permute.run(p[0], p[1], pool); };
    add_step(std::make_unique<KernelStep<decltype(step)>>(step, 2),
             {{source.buffer, source.offset}, {result.buffer, 0}}, node_index);
  }
  define(tensor, result);
  return values_[tensor].back();
}

Value PlanBuilder::padded(const std::string& tensor, const Value& value, size_t node_index) {
  const Buffer& from = buffers[value.buffer];
  if (from.kind == BufferKind::arena) return value;
  const std::string key = tensor + layout_str(value.layout);
  if (auto it = padded_.find(key); it != padded_.end()) return it->second;
  Value result = value;
  result.offset = 0;
  if (from.kind == BufferKind::constant) {
    void* data = keep(value.bytes());
    std::memcpy(data, static_cast<const std::byte*>(from.data) + value.offset, value.bytes());
    result.buffer = new_buffer(BufferKind::constant, value.bytes(), data);
  } else {
    // A caller's buffer may end at a page boundary: XNNPACK reads from a copy in the arena.
    result.buffer = new_buffer(BufferKind::arena, value.bytes());
    const size_t bytes = value.bytes();
    auto step = [bytes](Pointers p, ThreadPool*) { std::memcpy(p[1], p[0], bytes); };
    add_step(std::make_unique<KernelStep<decltype(step)>>(step, 2),
             {{value.buffer, value.offset}, {result.buffer, 0}}, node_index);
  }
  padded_.emplace(key, result);
  return result;
}

void PlanBuilder::add_step(std::unique_ptr<Step> step, std::vector<std::pair<int, size_t>> refs, size_t node_index) {
  const size_t index = steps.size();
  for (const auto& [buffer, offset] : refs) {
    Buffer& b = buffers[buffer];
    b.first_step = std::min(b.first_step, index);
    b.last_step = std::max(b.last_step, index);
  }
  steps.push_back(PlannedStep{std::move(step), std::move(refs), node_index});
}

void* PlanBuilder::keep(size_t bytes) {
  owned.emplace_back(bytes);
  owned_bytes += bytes;
  return owned.back().data();
}

std::optional<size_t> PlanBuilder::sole_consumer(const std::string& tensor) const {
  if (std::find(graph.outputs.begin(), graph.outputs.end(), tensor) != graph.outputs.end()) return std::nullopt;
  const auto it = consumers_.find(tensor);
  if (it == consumers_.end() || it->second.size() != 1) return std::nullopt;
  return it->second[0];  // listed once per read: add(t, t) lists its node twice
}

const std::vector<size_t>& PlanBuilder::consumers(const std::string& tensor) const {
  static const std::vector<size_t> none;
  const auto it = consumers_.find(tensor);
  return it == consumers_.end() ? none : it->second;
}

bool PlanBuilder::computed(const std::string& tensor) const {
  return values_.count(tensor) != 0 || graph.tensor(tensor).is_constant();
}

void PlanBuilder::plan_nodes() {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (fused_[i]) continue;  // planned with the node it was fused into
    const CpuKernel* kernel = find_cpu_kernel(graph, graph.nodes[i]);
    if (kernel == nullptr) fail(ExitCode::failure, "internal: no cpu kernel for op '{}'", graph.nodes[i].op);
    NodeContext context(*this, i);
    kernel->plan(context);
    release_packed_constants(graph.nodes[i]);
  }
  plan_outputs();
}

void PlanBuilder::release_packed_constants(const Node& node) {
  for (const auto& name : node.inputs) {
    if (name.empty() || !graph.tensor(name).is_constant() || read_in_place_.count(name)) continue;
    // Does any step read the model's own bytes (not a reordered or padded copy of them)?
    const ConstData& data = graph.tensor(name).data;
    bool read_at_run_time = false;
    if (auto it = values_.find(name); it != values_.end())
      for (const Value& version : it->second)
        read_at_run_time = read_at_run_time || (buffers[version.buffer].data == data.data() &&
                                                buffers[version.buffer].first_step != SIZE_MAX);
    if (read_at_run_time) continue;
    // Packed into an operator or reordered into plan memory: the model's copy is not read again
    // by this plan. MADV_PAGEOUT is only a hint and never loses data: file-backed pages of a
    // mapped model are dropped (and re-read if another plan needs them), heap pages are left alone
    // unless there is swap. Whole pages inside the tensor only.
    const auto begin = reinterpret_cast<uintptr_t>(data.data());
    static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t first = (begin + page - 1) & ~(page - 1), last = (begin + data.size()) & ~(page - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_PAGEOUT);
  }
}

void PlanBuilder::plan_outputs() {
  const size_t last_node = graph.nodes.empty() ? 0 : graph.nodes.size() - 1;
  for (const auto& name : graph.outputs) {
    Value value = current(name);
    const Layout row_major = identity_layout(value.shape.size());
    Buffer& buffer = buffers[value.buffer];
    // The output's own buffer can be handed to the caller when it holds exactly this tensor,
    // row-major; otherwise the output gets a buffer of its own and one last copy.
    // Not when XNNPACK reads it: a caller's buffer has no room for its over-reads.
    if (buffer.kind == BufferKind::arena && !buffer.claimed_by_output && !buffer.read_by_xnnpack &&
        value.offset == 0 && buffer.bytes == value.bytes() && same_memory_order(value.shape, value.layout, row_major)) {
      buffer.claimed_by_output = true;
      value.layout = row_major;
      output_values.push_back(value);
      continue;
    }
    Value result = value;
    result.offset = 0;
    result.layout = row_major;
    result.buffer = new_buffer(BufferKind::arena, value.bytes());
    buffers[result.buffer].claimed_by_output = true;
    if (same_memory_order(value.shape, value.layout, row_major)) {
      const size_t bytes = value.bytes();
      auto step = [bytes](Pointers p, ThreadPool*) { std::memcpy(p[1], p[0], bytes); };
      add_step(std::make_unique<KernelStep<decltype(step)>>(step, 2),
               {{value.buffer, value.offset}, {result.buffer, 0}}, last_node);
    } else {
      std::vector<int> perm(row_major.size());
      for (size_t k = 0; k < perm.size(); ++k) perm[k] = physical_axis(value.layout, static_cast<int>(k));
      Permute permute(value.physical(), perm, dtype_size(value.dtype));
      auto step = [permute](Pointers p, ThreadPool* pool) { permute.run(p[0], p[1], pool); };
      add_step(std::make_unique<KernelStep<decltype(step)>>(step, 2),
               {{value.buffer, value.offset}, {result.buffer, 0}}, last_node);
    }
    output_values.push_back(result);
  }
  // Outputs stay intact after the last step so that the caller can read them.
  for (const Value& value : output_values) {
    Buffer& buffer = buffers[value.buffer];
    buffer.first_step = std::min(buffer.first_step, steps.size());
    buffer.last_step = steps.size();
  }
}

NodeContext::NodeContext(PlanBuilder& builder, size_t node_index)
    : builder_(builder), node_index_(node_index), node_(builder.graph.nodes[node_index]) {}

Value NodeContext::xnn_input(size_t i, const Layout& layout) {
  const Value value = builder_.padded(node_.inputs.at(i), input(i, layout), node_index_);
  builder_.buffers[value.buffer].read_by_xnnpack = true;
  return value;
}

namespace {
// Tensor `name` (a node's output) in a new arena buffer, stored in `layout`.
Value new_output(PlanBuilder& builder, const std::string& name, const Layout& layout) {
  const TensorInfo& info = builder.graph.tensor(name);
  Value value{.buffer = builder.new_buffer(BufferKind::arena, info.byte_size()), .dtype = info.dtype,
              .shape = info.shape, .layout = canonical_layout(info.shape, layout)};
  builder.define(name, value);
  return value;
}
}  // namespace

Value NodeContext::output(size_t i, const Layout& layout) { return new_output(builder_, node_.outputs.at(i), layout); }

Value NodeContext::fused_output(size_t consumer, size_t i, const Layout& layout) {
  builder_.fuse(consumer);
  return new_output(builder_, builder_.graph.nodes.at(consumer).outputs.at(i), layout);
}

Value NodeContext::alias(size_t i, const Value& source, const Layout& layout, size_t extra_offset) {
  const TensorInfo& info = output_info(i);
  Value value{.buffer = source.buffer, .offset = source.offset + extra_offset, .dtype = info.dtype,
              .shape = info.shape, .layout = canonical_layout(info.shape, layout)};
  builder_.define(node_.outputs[i], value);
  return value;
}

Value NodeContext::owned_constant(void* data, DType dtype, Shape shape) {
  Value value{.dtype = dtype, .shape = std::move(shape)};
  value.layout = identity_layout(value.shape.size());
  value.buffer = builder_.new_buffer(BufferKind::constant, value.bytes(), data);
  return value;
}

Value NodeContext::scratch(size_t bytes) {
  return Value{.buffer = builder_.new_buffer(BufferKind::arena, bytes), .dtype = DType::u8,
               .shape = {static_cast<int64_t>(bytes)}, .layout = {0}};
}

void NodeContext::check(xnn_status status, const char* call) const {
  if (status != xnn_status_success)
    fail(ExitCode::failure, "node '{}' ({}): XNNPACK {} failed (status {})", node_.name, node_.op, call,
         static_cast<int>(status));
}

std::vector<std::pair<int, size_t>> NodeContext::refs(const std::vector<Value>& values) {
  std::vector<std::pair<int, size_t>> result;
  for (const Value& value : values) result.emplace_back(value.buffer, value.offset);
  return result;
}

}  // namespace mt::cpu
