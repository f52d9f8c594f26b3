// The backend's own sub-allocator (there is no VMA package): a few large VkDeviceMemory blocks, each
// with one VkBuffer spanning it, carved into aligned ranges with a first-fit free list. Tensors,
// weights and staging areas are ranges of those buffers, so a plan makes a handful of allocations.
#pragma once

#include <volk.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/vulkan/runtime/device_info.h"

namespace mt::vulkan {

enum class MemoryKind {
  device,  // device-local: tensors, weights (mapped too when the memory type is host-visible)
  host,    // host-visible and coherent, cached where possible: staging for inputs and outputs
};

// A range of one block's buffer.
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  std::byte* mapped = nullptr;  // host address of `offset`, or nullptr when not host-visible
  int block = -1;
  explicit operator bool() const { return block >= 0; }
};

class Allocator {
 public:
  // Blocks are at least this large; a larger request gets a block of its own.
  static constexpr VkDeviceSize kBlockBytes = VkDeviceSize{64} << 20;

  Allocator(VkDevice device, const DeviceInfo& info);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // `size` bytes aligned for storage-buffer descriptors. Throws Error(failure) naming the size when
  // the device has no memory left or the size exceeds what one allocation may have.
  Allocation allocate(VkDeviceSize size, MemoryKind kind);
  // Returns a range; a block left empty is given back to the device, except the last of its kind.
  void release(const Allocation& allocation);

  VkDeviceSize alignment() const { return alignment_; }
  bool device_memory_is_mapped() const;

 private:
  struct Block {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    std::byte* mapped = nullptr;
    MemoryKind kind = MemoryKind::device;
    std::map<VkDeviceSize, VkDeviceSize> free;  // offset -> size, coalesced
    size_t live = 0;                             // allocations not yet released
  };
  int new_block(VkDeviceSize size, MemoryKind kind);
  void destroy_block(Block& block);
  uint32_t memory_type(MemoryKind kind) const { return kind == MemoryKind::device ? device_type_ : host_type_; }

  VkDevice device_;
  VkDeviceSize alignment_ = 256;
  VkDeviceSize max_allocation_ = 0;
  uint32_t device_type_ = 0, host_type_ = 0;
  bool device_mapped_ = false;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Block>> blocks_;  // null where a block was given back
};

}  // namespace mt::vulkan
