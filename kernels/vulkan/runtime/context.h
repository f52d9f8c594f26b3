// One Vulkan device opened for the whole process (per --gpu index): the logical device and its
// compute queue, the sub-allocator, and the compute pipelines with their on-disk cache. Plans share
// it, so a process that plans many graphs (the op harness, mt-bench) compiles each pipeline once.
#pragma once

#include <volk.h>

#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/vulkan/runtime/allocator.h"
#include "kernels/vulkan/runtime/device_info.h"

namespace mt::vulkan {

// A compute pipeline: shader (variant), workgroup size and specialization constants (ids 3, 4, ...;
// ids 0-2 are the workgroup size), with `bindings` storage buffers in set 0.
struct PipelineKey {
  std::string shader;
  bool fp16 = false;
  std::array<uint32_t, 3> local{64, 1, 1};
  std::vector<uint32_t> spec;  // 32-bit values: ints, or floats by their bits
  uint32_t bindings = 1;
  uint32_t texel_bindings = 0;  // bit b: binding b is a uniform texel buffer (read with texelFetch)
  auto operator<=>(const PipelineKey&) const = default;
};

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
};

// How binding `binding` of a pipeline's descriptor set is declared: storage buffer or uniform texel
// buffer (PipelineKey::texel_bindings).
VkDescriptorType descriptor_type(const PipelineKey& key, uint32_t binding);

class Context {
 public:
  // The context of physical device `gpu_index`, opened on first use. Throws Error(unsupported) with
  // one line when Vulkan or the device is missing, and Error(usage) for an index out of range.
  static std::shared_ptr<Context> get(int gpu_index);

  Context(const DeviceInfo& info);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& info() const { return info_; }
  VkDevice device() const { return device_; }
  uint32_t queue_family() const { return static_cast<uint32_t>(info_.compute_queue_family); }
  Allocator& allocator() { return *allocator_; }

  // The pipeline for `key`, created through the pipeline cache on first request. Thread-safe.
  const Pipeline& pipeline(const PipelineKey& key);
  // Writes the pipeline cache file when pipelines were created since it was loaded or last saved.
  void save_pipeline_cache();

  // Submits one command buffer and waits for it; queue access is serialized between plans.
  void submit_and_wait(VkCommandBuffer commands, VkFence fence, const char* what);
  // Copies `size` bytes to a device allocation: a memcpy when it is mapped, else through staging.
  void upload(const Allocation& destination, const void* data, size_t size);

 private:
  void destroy();
  VkShaderModule shader_module(const std::string& name, bool fp16);
  VkDescriptorSetLayout set_layout(const PipelineKey& key);

  DeviceInfo info_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::unique_ptr<Allocator> allocator_;
  std::mutex queue_mutex_;
  VkCommandPool upload_pool_ = VK_NULL_HANDLE;  // guarded by queue_mutex_

  std::mutex pipeline_mutex_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_path_;
  size_t created_since_save_ = 0;
  std::map<std::pair<std::string, bool>, VkShaderModule> modules_;
  // By (bindings, texel bindings).
  std::map<std::pair<uint32_t, uint32_t>, VkDescriptorSetLayout> set_layouts_;
  std::map<std::pair<uint32_t, uint32_t>, VkPipelineLayout> layouts_;
  std::map<PipelineKey, Pipeline> pipelines_;
};

}  // namespace mt::vulkan
