#include "kernels/vulkan/plan/vulkan_plan.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <map>

#include "kernels/vulkan/runtime/instance.h"
#include "kernels/vulkan/runtime/vk_util.h"
#include "lib/core/error.h"
#include "lib/runtime/memory_planner.h"

namespace mt::vulkan {
namespace {

VkDeviceSize align_up(VkDeviceSize value, VkDeviceSize alignment) { return (value + alignment - 1) / alignment * alignment; }

// A byte range of a VkBuffer that a dispatch reads or writes, for barrier placement.
struct Range {
  VkBuffer buffer;
  VkDeviceSize begin, end;
  bool overlaps(const Range& other) const { return buffer == other.buffer && begin < other.end && other.begin < end; }
};

bool overlaps_any(const Range& range, const std::vector<Range>& list) {
  for (const Range& other : list)
    if (range.overlaps(other)) return true;
  return false;
}

void memory_barrier(VkCommandBuffer commands, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(commands, src_stage, dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

void compute_barrier(VkCommandBuffer commands) {
  memory_barrier(commands, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                 VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
}

}  // namespace

VulkanPlan::VulkanPlan(const Graph& graph, const PlanOptions& options, std::shared_ptr<Context> context)
    : context_(std::move(context)), device_(context_->device()), node_count_(graph.nodes.size()), profile_(options.profile) {
  const DeviceInfo& info = context_->info();
  if (options.precision != "fp32" && options.precision != "fp16")
    fail(ExitCode::usage, "--precision {}: expected fp32 or fp16", options.precision);
  const bool fp16 = options.precision == "fp16";
  if (fp16 && !info.supports_fp16())
    unsupported("vulkan: device {} ({}) cannot run --precision fp16: it lacks {}", info.index, info.name,
                !info.fp16_storage ? "16-bit storage buffers (storageBuffer16BitAccess)" : "fp16 arithmetic (shaderFloat16)");
  if (profile_ && info.timestamp_period_ns <= 0)
    unsupported("vulkan: device {} ({}) has no timestamps on its compute queue, which profiling needs", info.index, info.name);
  input_names_ = graph.inputs;
  for (const auto& [name, tensor] : graph.tensors)
    if (tensor.is_constant()) stats_.weight_bytes += tensor.data.size();

  const bool int8_dot = info.int8_dot_product && options.vulkan_int8_dot.value_or(info.int8_dot_product_accelerated);
  PlanBuilder builder(graph, fp16, int8_dot, &info);
  builder.build();
  try {
    place(builder);
    create_descriptors(builder);
    record(builder);
  } catch (...) {
    release();
    throw;
  }
  inputs_.assign(graph.inputs.size(), nullptr);
  input_bound_.assign(graph.inputs.size(), false);
  outputs_.assign(graph.outputs.size(), nullptr);
  node_seconds_.assign(node_count_, 0.0);
  context_->save_pipeline_cache();
  check_validation("planning");
  spdlog::debug("vulkan: planned {} nodes as {} dispatches; arena {} bytes, weights {} bytes", graph.nodes.size(),
                builder.dispatches.size(), stats_.arena_bytes, stats_.packed_weight_bytes);
}

VulkanPlan::~VulkanPlan() { release(); }

void VulkanPlan::release() {
  if (fence_ != VK_NULL_HANDLE) vkDestroyFence(device_, fence_, nullptr);
  if (command_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, command_pool_, nullptr);  // frees commands_
  if (descriptor_pool_ != VK_NULL_HANDLE) vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
  if (queries_ != VK_NULL_HANDLE) vkDestroyQueryPool(device_, queries_, nullptr);
  for (VkBufferView view : views_) vkDestroyBufferView(device_, view, nullptr);
  views_.clear();
  fence_ = VK_NULL_HANDLE;
  command_pool_ = VK_NULL_HANDLE;
  descriptor_pool_ = VK_NULL_HANDLE;
  queries_ = VK_NULL_HANDLE;
  for (const Allocation& allocation : allocations_) context_->allocator().release(allocation);
  allocations_.clear();
}

void VulkanPlan::place(PlanBuilder& builder) {
  Allocator& allocator = context_->allocator();
  const VkDeviceSize alignment = allocator.alignment();
  std::vector<Buffer>& buffers = builder.buffers;

  // Intermediate tensors share one arena by liveness (in dispatch order).
  std::vector<TensorRequest> requests;
  std::vector<size_t> arena_buffers;
  for (size_t b = 0; b < buffers.size(); ++b) {
    if (buffers[b].region != Region::arena || buffers[b].first == SIZE_MAX) continue;
    requests.push_back({buffers[b].bytes, Lifetime{buffers[b].first, buffers[b].last}});
    arena_buffers.push_back(b);
    stats_.intermediate_bytes += buffers[b].bytes;
  }
  const MemoryPlan plan = plan_memory(requests, alignment);
  stats_.arena_bytes = plan.arena_bytes;
  const Allocation arena = allocator.allocate(std::max<VkDeviceSize>(plan.arena_bytes, 4), MemoryKind::device);
  allocations_.push_back(arena);
  for (size_t r = 0; r < arena_buffers.size(); ++r) {
    buffers[arena_buffers[r]].buffer = arena.buffer;
    buffers[arena_buffers[r]].offset = arena.offset + plan.offsets[r];
  }
  // NaN in every arena byte until written: a shader that forgets a lane shows up in the tests.
  if (arena.mapped != nullptr) std::memset(arena.mapped, 0xff, arena.size);

  // Every other region is packed back to back in one allocation per memory kind.
  auto pack_region = [&](std::initializer_list<Region> regions, MemoryKind kind) -> Allocation {
    VkDeviceSize total = 0;
    for (const Buffer& buffer : buffers)
      for (Region region : regions)
        if (buffer.region == region) total = align_up(total, alignment) + buffer.bytes;
    const Allocation allocation = allocator.allocate(std::max<VkDeviceSize>(total, 4), kind);
    allocations_.push_back(allocation);
    VkDeviceSize offset = 0;
    for (Buffer& buffer : buffers)
      for (Region region : regions)
        if (buffer.region == region) {
          offset = align_up(offset, alignment);
          buffer.buffer = allocation.buffer;
          buffer.offset = allocation.offset + offset;
          offset += buffer.bytes;
        }
    return allocation;
  };
  const Allocation constants = pack_region({Region::weights, Region::params}, MemoryKind::device);
  std::vector<std::byte> upload(constants.size);
  for (const Buffer& buffer : buffers) {
    if (buffer.region == Region::weights) stats_.packed_weight_bytes += buffer.bytes;
    if (!buffer.data.empty() && (buffer.region == Region::weights || buffer.region == Region::params))
      std::memcpy(upload.data() + (buffer.offset - constants.offset), buffer.data.data(), buffer.data.size());
  }
  context_->upload(constants, upload.data(), upload.size());

  const Allocation inputs = pack_region({Region::input_staging}, MemoryKind::host);
  const Allocation outputs = pack_region({Region::output_staging}, MemoryKind::host);
  for (int b : builder.input_staging) {
    input_staging_.push_back(inputs.mapped + (buffers[static_cast<size_t>(b)].offset - inputs.offset));
    const TensorInfo& info = builder.graph.tensor(builder.graph.inputs[input_bytes_.size()]);
    input_bytes_.push_back(info.byte_size());
    input_bool_.push_back(info.dtype == DType::boolean);
  }
  for (int b : builder.output_staging) {
    output_staging_.push_back(outputs.mapped + (buffers[static_cast<size_t>(b)].offset - outputs.offset));
    const TensorInfo& info = builder.graph.tensor(builder.graph.outputs[output_bytes_.size()]);
    output_bytes_.push_back(info.byte_size());
    output_bool_.push_back(info.dtype == DType::boolean && !info.is_constant());
  }
  bool_outputs_.resize(output_bool_.size());
  for (size_t o = 0; o < output_bool_.size(); ++o)
    if (output_bool_[o]) bool_outputs_[o].resize(output_bytes_[o]);
  // No dispatch writes these: their bytes stay in staging for every run.
  for (size_t o : builder.constant_outputs) {
    const auto bytes = builder.graph.tensor(builder.graph.outputs[o]).data.bytes();
    std::memcpy(output_staging_[o], bytes.data(), bytes.size());
  }
}

void VulkanPlan::create_descriptors(const PlanBuilder& builder) {
  const auto& dispatches = builder.dispatches;
  std::map<VkDescriptorType, uint32_t> counts;
  for (const Dispatch& d : dispatches) {
    pipelines_.push_back(&context_->pipeline(d.key));
    for (uint32_t b = 0; b < d.key.bindings; ++b) ++counts[descriptor_type(d.key, b)];
  }
  if (dispatches.empty()) return;
  std::vector<VkDescriptorPoolSize> sizes;
  for (const auto& [type, count] : counts) sizes.push_back({type, count});
  VkDescriptorPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool_info.maxSets = static_cast<uint32_t>(dispatches.size());
  pool_info.poolSizeCount = static_cast<uint32_t>(sizes.size());
  pool_info.pPoolSizes = sizes.data();
  check_vk(vkCreateDescriptorPool(device_, &pool_info, nullptr, &descriptor_pool_), "vkCreateDescriptorPool");
  std::vector<VkDescriptorSetLayout> layouts;
  for (const Pipeline* p : pipelines_) layouts.push_back(p->set_layout);
  VkDescriptorSetAllocateInfo allocate{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  allocate.descriptorPool = descriptor_pool_;
  allocate.descriptorSetCount = static_cast<uint32_t>(layouts.size());
  allocate.pSetLayouts = layouts.data();
  sets_.resize(layouts.size());
  check_vk(vkAllocateDescriptorSets(device_, &allocate, sets_.data()), "vkAllocateDescriptorSets");

  // One view per buffer and texel format; its range is whole texels.
  const DeviceInfo& info = context_->info();
  std::map<std::pair<int, Texels>, VkBufferView> view_of;
  auto view = [&](int b, Texels texels) {
    if (auto it = view_of.find({b, texels}); it != view_of.end()) return it->second;
    VkFormat format = builder.fp16 ? VK_FORMAT_R16G16B16A16_SFLOAT : VK_FORMAT_R32G32B32A32_SFLOAT;
    VkDeviceSize texel_bytes = builder.fp16 ? 8 : 16;
    if (texels == Texels::int4) format = VK_FORMAT_R32G32B32A32_SINT, texel_bytes = 16;
    if (texels == Texels::int1) format = VK_FORMAT_R32_SINT, texel_bytes = 4;
    const Buffer& buffer = builder.buffers[static_cast<size_t>(b)];
    const VkDeviceSize count = buffer.bytes / texel_bytes;
    if (count > info.max_texel_buffer_elements)
      fail(ExitCode::unsupported, "vulkan: a tensor of {} texels exceeds device '{}''s texel buffers ({} texels)",
           count, info.name, info.max_texel_buffer_elements);
    VkBufferViewCreateInfo view_info{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    view_info.buffer = buffer.buffer;
    view_info.format = format;
    view_info.offset = buffer.offset;
    view_info.range = std::max<VkDeviceSize>(count, 1) * texel_bytes;
    VkBufferView v = VK_NULL_HANDLE;
    check_vk(vkCreateBufferView(device_, &view_info, nullptr, &v), "vkCreateBufferView");
    views_.push_back(v);
    return view_of[{b, texels}] = v;
  };

  size_t total = 0;
  for (const Dispatch& d : dispatches) total += d.key.bindings;
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkBufferView> texel_views;
  infos.reserve(total);
  texel_views.reserve(total);
  std::vector<VkWriteDescriptorSet> writes;
  auto info_of = [&](int b) {
    const Buffer& buffer = builder.buffers[static_cast<size_t>(b)];
    return VkDescriptorBufferInfo{buffer.buffer, buffer.offset, buffer.bytes};
  };
  for (size_t i = 0; i < dispatches.size(); ++i) {
    const Dispatch& d = dispatches[i];
    for (uint32_t b = 0; b < d.key.bindings; ++b) {
      const int buffer = b == 0 ? d.params : d.bindings[b - 1].buffer;
      VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      write.dstSet = sets_[i];
      write.dstBinding = b;
      write.descriptorCount = 1;
      write.descriptorType = descriptor_type(d.key, b);
      if (write.descriptorType == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER) {
        infos.push_back(info_of(buffer));
        write.pBufferInfo = &infos.back();
      } else {
        texel_views.push_back(view(buffer, d.bindings[b - 1].texels));
        write.pTexelBufferView = &texel_views.back();
      }
      writes.push_back(write);
    }
  }
  vkUpdateDescriptorSets(device_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
}

void VulkanPlan::record(const PlanBuilder& builder) {
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = context_->queue_family();
  check_vk(vkCreateCommandPool(device_, &pool_info, nullptr, &command_pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocate.commandPool = command_pool_;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  check_vk(vkAllocateCommandBuffers(device_, &allocate, &commands_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  check_vk(vkCreateFence(device_, &fence_info, nullptr, &fence_), "vkCreateFence");

  const auto& dispatches = builder.dispatches;
  if (profile_) {
    for (size_t i = 0; i < dispatches.size(); ++i)
      if (i == 0 || dispatches[i].node_index != dispatches[i - 1].node_index) segment_nodes_.push_back(dispatches[i].node_index);
    if (!segment_nodes_.empty()) {
      VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
      query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
      query_info.queryCount = static_cast<uint32_t>(2 * segment_nodes_.size());
      check_vk(vkCreateQueryPool(device_, &query_info, nullptr, &queries_), "vkCreateQueryPool");
      timestamps_.resize(query_info.queryCount);
    }
  }

  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check_vk(vkBeginCommandBuffer(commands_, &begin), "vkBeginCommandBuffer");
  if (queries_ != VK_NULL_HANDLE) vkCmdResetQueryPool(commands_, queries_, 0, static_cast<uint32_t>(timestamps_.size()));
  // The inputs the host wrote into staging before submitting.
  memory_barrier(commands_, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                 VK_ACCESS_SHADER_READ_BIT);
  // A barrier goes where a dispatch reads what an earlier one wrote since the last barrier, or
  // writes what one read or wrote (the arena reuses memory), so independent dispatches overlap.
  std::vector<Range> reads, writes, mine_read, mine_written;
  VkPipeline bound = VK_NULL_HANDLE;
  uint32_t query = 0;
  for (size_t i = 0; i < dispatches.size(); ++i) {
    const Dispatch& d = dispatches[i];
    mine_read.clear();
    mine_written.clear();
    for (const Binding& binding : d.bindings) {
      const Buffer& buffer = builder.buffers[static_cast<size_t>(binding.buffer)];
      (binding.writes ? mine_written : mine_read).push_back({buffer.buffer, buffer.offset, buffer.offset + buffer.bytes});
    }
    const bool new_segment = queries_ != VK_NULL_HANDLE && (i == 0 || d.node_index != dispatches[i - 1].node_index);
    bool hazard = new_segment;
    for (const Range& r : mine_read) hazard = hazard || overlaps_any(r, writes);
    for (const Range& w : mine_written) hazard = hazard || overlaps_any(w, writes) || overlaps_any(w, reads);
    if (new_segment && i > 0) vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, query++);
    if (hazard) {
      compute_barrier(commands_);
      reads.clear();
      writes.clear();
    }
    if (new_segment) vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, query++);
    reads.insert(reads.end(), mine_read.begin(), mine_read.end());
    writes.insert(writes.end(), mine_written.begin(), mine_written.end());

    const Pipeline& pipeline = *pipelines_[i];
    if (pipeline.pipeline != bound) {
      vkCmdBindPipeline(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline);
      bound = pipeline.pipeline;
    }
    vkCmdBindDescriptorSets(commands_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.layout, 0, 1, &sets_[i], 0, nullptr);
    vkCmdDispatch(commands_, d.groups[0], d.groups[1], d.groups[2]);
  }
  if (queries_ != VK_NULL_HANDLE) {
    compute_barrier(commands_);
    vkCmdWriteTimestamp(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, queries_, query++);
  }
  // The outputs the host reads from staging after the fence.
  memory_barrier(commands_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_HOST_READ_BIT);
  check_vk(vkEndCommandBuffer(commands_), "vkEndCommandBuffer");
}

void VulkanPlan::bind_input(size_t index, const void* data) {
  if (index >= inputs_.size()) fail(ExitCode::failure, "bind_input: index {} out of range ({} inputs)", index, inputs_.size());
  inputs_[index] = data;
  input_bound_[index] = true;
}

void VulkanPlan::bind_output(size_t index, void* data) {
  if (index >= outputs_.size()) fail(ExitCode::failure, "bind_output: index {} out of range ({} outputs)", index, outputs_.size());
  outputs_[index] = data;
}

const void* VulkanPlan::output_data(size_t index) const {
  if (index >= outputs_.size()) fail(ExitCode::failure, "output_data: index {} out of range ({} outputs)", index, outputs_.size());
  if (outputs_[index] != nullptr) return outputs_[index];
  return output_bool_[index] ? static_cast<const void*>(bool_outputs_[index].data()) : output_staging_[index];
}

void VulkanPlan::run() {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i] == nullptr) fail(ExitCode::invalid_input, "input '{}' is not bound", input_names_[i]);
    // The staging buffer keeps the last copy; the pack dispatch of every run reads it from there.
    if (!reuse_inputs_ || input_bound_[i]) {
      if (input_bool_[i]) {
        const auto* bytes = static_cast<const uint8_t*>(inputs_[i]);
        auto* floats = reinterpret_cast<float*>(input_staging_[i]);
        for (size_t k = 0; k < input_bytes_[i]; ++k) floats[k] = bytes[k] != 0 ? 1.0f : 0.0f;
      } else {
        std::memcpy(input_staging_[i], inputs_[i], input_bytes_[i]);
      }
    }
    input_bound_[i] = false;
  }
  context_->submit_and_wait(commands_, fence_, "vkQueueSubmit");
  if (validation_enabled()) check_validation("a run");
  if (queries_ != VK_NULL_HANDLE) {
    check_vk(vkGetQueryPoolResults(device_, queries_, 0, static_cast<uint32_t>(timestamps_.size()),
                                   timestamps_.size() * sizeof(uint64_t), timestamps_.data(), sizeof(uint64_t),
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    std::fill(node_seconds_.begin(), node_seconds_.end(), 0.0);
    const double period = context_->info().timestamp_period_ns * 1e-9;
    for (size_t s = 0; s < segment_nodes_.size(); ++s) {
      const uint64_t ticks = timestamps_[2 * s + 1] - timestamps_[2 * s];
      if (segment_nodes_[s] < node_seconds_.size()) node_seconds_[segment_nodes_[s]] += static_cast<double>(ticks) * period;
    }
  }
  for (size_t o = 0; o < outputs_.size(); ++o) {
    if (output_bool_[o]) {
      auto* bytes = outputs_[o] != nullptr ? static_cast<uint8_t*>(outputs_[o]) : bool_outputs_[o].data();
      const auto* floats = reinterpret_cast<const float*>(output_staging_[o]);
      for (size_t k = 0; k < output_bytes_[o]; ++k) bytes[k] = floats[k] != 0.0f ? 1 : 0;
    } else if (outputs_[o] != nullptr) {
      std::memcpy(outputs_[o], output_staging_[o], output_bytes_[o]);
    }
  }
}

std::vector<NodeTiming> VulkanPlan::last_profile() const {
  if (!profile_) return {};
  std::vector<NodeTiming> timings(node_count_);
  for (size_t n = 0; n < node_count_; ++n) timings[n] = {n, node_seconds_[n]};
  return timings;
}

}  // namespace mt::vulkan
