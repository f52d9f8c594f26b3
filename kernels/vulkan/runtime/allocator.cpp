#include "kernels/vulkan/runtime/allocator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "kernels/vulkan/runtime/vk_util.h"
#include "lib/core/error.h"

namespace mt::vulkan {
namespace {

constexpr VkBufferUsageFlags kUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
constexpr VkMemoryPropertyFlags kHostCoherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;

VkDeviceSize align_up(VkDeviceSize value, VkDeviceSize alignment) { return (value + alignment - 1) / alignment * alignment; }

// The first memory type allowed by `bits` that has all of `required`, preferring those that also
// have `preferred`; -1 when none has `required`.
int pick_type(const VkPhysicalDeviceMemoryProperties& memory, uint32_t bits, VkMemoryPropertyFlags required,
              VkMemoryPropertyFlags preferred) {
  int fallback = -1;
  for (uint32_t t = 0; t < memory.memoryTypeCount; ++t) {
    if (!(bits & (1u << t))) continue;
    const VkMemoryPropertyFlags flags = memory.memoryTypes[t].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return static_cast<int>(t);
    if (fallback < 0) fallback = static_cast<int>(t);
  }
  return fallback;
}

}  // namespace

Allocator::Allocator(VkDevice device, const DeviceInfo& info) : device_(device) {
  alignment_ =
      std::max<VkDeviceSize>({info.min_storage_buffer_offset_alignment, info.min_texel_buffer_offset_alignment, 64});
  max_allocation_ = info.max_memory_allocation;
  // Which memory types can back a storage buffer: ask with a small buffer of the usage we create.
  VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  buffer_info.size = 4096;
  buffer_info.usage = kUsage;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer probe = VK_NULL_HANDLE;
  check_vk(vkCreateBuffer(device_, &buffer_info, nullptr, &probe), "vkCreateBuffer");
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device_, probe, &requirements);
  vkDestroyBuffer(device_, probe, nullptr);
  alignment_ = std::max(alignment_, requirements.alignment);

  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(info.physical, &memory);
  int device_type = pick_type(memory, requirements.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  if (device_type < 0) device_type = pick_type(memory, requirements.memoryTypeBits, 0, 0);
  const int host_type = pick_type(memory, requirements.memoryTypeBits, kHostCoherent, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (device_type < 0 || host_type < 0)
    fail(ExitCode::unsupported, "vulkan: device '{}' has no memory type for storage buffers{}", info.name,
         host_type < 0 ? " that the host can map coherently" : "");
  device_type_ = static_cast<uint32_t>(device_type);
  host_type_ = static_cast<uint32_t>(host_type);
  device_mapped_ = (memory.memoryTypes[device_type_].propertyFlags & kHostCoherent) == kHostCoherent;
  spdlog::debug("vulkan: memory types: device {} (host-mapped: {}), staging {}; alignment {}", device_type_,
                device_mapped_, host_type_, alignment_);
}

Allocator::~Allocator() {
  for (auto& block : blocks_)
    if (block) destroy_block(*block);
}

bool Allocator::device_memory_is_mapped() const { return device_mapped_; }

void Allocator::destroy_block(Block& block) {
  if (block.buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, block.buffer, nullptr);
  if (block.memory != VK_NULL_HANDLE) vkFreeMemory(device_, block.memory, nullptr);  // unmaps too
  block.buffer = VK_NULL_HANDLE;
  block.memory = VK_NULL_HANDLE;
}

int Allocator::new_block(VkDeviceSize size, MemoryKind kind) {
  auto block = std::make_unique<Block>();
  block->size = size;
  block->kind = kind;
  VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  buffer_info.size = size;
  buffer_info.usage = kUsage;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check_vk(vkCreateBuffer(device_, &buffer_info, nullptr, &block->buffer), "vkCreateBuffer");
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device_, block->buffer, &requirements);
  VkMemoryAllocateInfo allocate_info{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocate_info.allocationSize = requirements.size;
  allocate_info.memoryTypeIndex = memory_type(kind);
  const VkResult result = vkAllocateMemory(device_, &allocate_info, nullptr, &block->memory);
  if (result != VK_SUCCESS) {
    destroy_block(*block);
    fail(ExitCode::failure, "vulkan: cannot allocate {} bytes of {} memory: {}", size,
         kind == MemoryKind::device ? "device" : "host-visible", result_name(result));
  }
  try {
    check_vk(vkBindBufferMemory(device_, block->buffer, block->memory, 0), "vkBindBufferMemory");
    if (kind == MemoryKind::host || device_mapped_) {
      void* mapped = nullptr;
      check_vk(vkMapMemory(device_, block->memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
      block->mapped = static_cast<std::byte*>(mapped);
    }
  } catch (...) {
    destroy_block(*block);
    throw;
  }
  block->free.emplace(0, size);
  spdlog::debug("vulkan: new {} memory block of {} bytes", kind == MemoryKind::device ? "device" : "staging", size);
  for (size_t b = 0; b < blocks_.size(); ++b)
    if (!blocks_[b]) {
      blocks_[b] = std::move(block);
      return static_cast<int>(b);
    }
  blocks_.push_back(std::move(block));
  return static_cast<int>(blocks_.size() - 1);
}

Allocation Allocator::allocate(VkDeviceSize size, MemoryKind kind) {
  size = align_up(std::max<VkDeviceSize>(size, 4), alignment_);
  if (max_allocation_ != 0 && size > max_allocation_)
    fail(ExitCode::failure, "vulkan: {} bytes exceed the device's largest allocation ({} bytes)", size, max_allocation_);
  std::lock_guard lock(mutex_);
  auto take = [&](int b) -> Allocation {
    Block& block = *blocks_[b];
    for (auto it = block.free.begin(); it != block.free.end(); ++it) {
      if (it->second < size) continue;
      const VkDeviceSize offset = it->first, left = it->second - size;
      block.free.erase(it);
      if (left > 0) block.free.emplace(offset + size, left);
      ++block.live;
      return Allocation{block.buffer, offset, size, block.mapped ? block.mapped + offset : nullptr, b};
    }
    return {};
  };
  for (size_t b = 0; b < blocks_.size(); ++b)
    if (blocks_[b] && blocks_[b]->kind == kind)
      if (Allocation a = take(static_cast<int>(b))) return a;
  VkDeviceSize block_size = std::max(size, kBlockBytes);
  if (max_allocation_ != 0) block_size = std::min(block_size, max_allocation_);
  return take(new_block(block_size, kind));
}

void Allocator::release(const Allocation& allocation) {
  if (!allocation) return;
  std::lock_guard lock(mutex_);
  Block& block = *blocks_.at(static_cast<size_t>(allocation.block));
  auto [it, inserted] = block.free.emplace(allocation.offset, allocation.size);
  if (!inserted) return;  // released twice: keep the free list consistent
  // Merge with the neighbours.
  if (auto next = std::next(it); next != block.free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    block.free.erase(next);
  }
  if (it != block.free.begin()) {
    auto previous = std::prev(it);
    if (previous->first + previous->second == it->first) {
      previous->second += it->second;
      block.free.erase(it);
    }
  }
  if (--block.live > 0) return;
  size_t same_kind = 0;
  for (const auto& b : blocks_) same_kind += b && b->kind == block.kind ? 1 : 0;
  if (same_kind > 1) {
    destroy_block(block);
    blocks_[static_cast<size_t>(allocation.block)].reset();
  }
}

}  // namespace mt::vulkan
