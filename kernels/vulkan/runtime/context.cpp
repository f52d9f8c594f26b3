#include "kernels/vulkan/runtime/context.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

#include "kernels/vulkan/runtime/instance.h"
#include "kernels/vulkan/runtime/pipeline_cache.h"
#include "kernels/vulkan/runtime/shader_binaries.h"
#include "kernels/vulkan/runtime/vk_util.h"
#include "lib/core/error.h"

namespace mt::vulkan {
namespace {

// The contexts opened so far, destroyed at exit (before the instance, which is created first).
struct Registry {
  std::mutex mutex;
  std::map<int, std::shared_ptr<Context>> contexts;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::shared_ptr<Context> Context::get(int gpu_index) {
  if (auto reason = vulkan_unavailable_reason()) fail(ExitCode::unsupported, "vulkan: {}", *reason);
  Registry& r = registry();  // after the instance, so that it is destroyed before it
  std::lock_guard lock(r.mutex);
  if (auto it = r.contexts.find(gpu_index); it != r.contexts.end()) return it->second;
  const std::vector<DeviceInfo> devices = enumerate_devices();
  if (gpu_index < 0 || static_cast<size_t>(gpu_index) >= devices.size()) {
    std::string names;
    for (const auto& d : devices) names += fmt::format("{}{}: {}", names.empty() ? "" : ", ", d.index, d.name);
    fail(ExitCode::usage, "--gpu {}: there {} {} Vulkan device{} ({})", gpu_index, devices.size() == 1 ? "is" : "are",
         devices.size(), devices.size() == 1 ? "" : "s", names);
  }
  const DeviceInfo& info = devices[static_cast<size_t>(gpu_index)];
  if (info.compute_queue_family < 0) fail(ExitCode::unsupported, "vulkan: device {} ({}) has no compute queue", gpu_index, info.name);
  if (info.api_version < VK_API_VERSION_1_1)
    fail(ExitCode::unsupported, "vulkan: device {} ({}) supports Vulkan {}; mt needs 1.1", gpu_index, info.name,
         version_str(info.api_version));
  auto context = std::make_shared<Context>(info);
  r.contexts.emplace(gpu_index, context);
  return context;
}

Context::Context(const DeviceInfo& info) : info_(info) {
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = queue_family();
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  // fp16 is enabled whenever the device has it; plans decide whether to use it.
  std::vector<const char*> extensions;
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features float16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  if (info_.supports_fp16()) {
    storage16.storageBuffer16BitAccess = VK_TRUE;
    float16.shaderFloat16 = VK_TRUE;
    features.pNext = &storage16;
    storage16.pNext = &float16;
    if (info_.api_version < VK_API_VERSION_1_2) extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  }
  // int8 dot products likewise, for the int8 conv and linear shaders' *_dot variants.
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  if (info_.int8_dot_product) {
    dot.shaderIntegerDotProduct = VK_TRUE;
    dot.pNext = features.pNext;
    features.pNext = &dot;
    extensions.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  }
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &features;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  device_info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  device_info.ppEnabledExtensionNames = extensions.data();
  check_vk(vkCreateDevice(info_.physical, &device_info, nullptr, &device_), "vkCreateDevice");
  vkGetDeviceQueue(device_, queue_family(), 0, &queue_);
  try {
    allocator_ = std::make_unique<Allocator>(device_, info_);
    VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = queue_family();
    check_vk(vkCreateCommandPool(device_, &pool_info, nullptr, &upload_pool_), "vkCreateCommandPool");

    cache_path_ = pipeline_cache_path(info_);
    const std::vector<std::byte> cached = load_pipeline_cache(cache_path_, info_);
    VkPipelineCacheCreateInfo cache_info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    cache_info.initialDataSize = cached.size();
    cache_info.pInitialData = cached.empty() ? nullptr : cached.data();
    check_vk(vkCreatePipelineCache(device_, &cache_info, nullptr, &cache_), "vkCreatePipelineCache");
    if (!cached.empty()) spdlog::info("vulkan: pipeline cache {}: loaded {} bytes", cache_path_, cached.size());
  } catch (...) {
    destroy();
    throw;
  }
  spdlog::info("vulkan: device {}: {} ({}, driver {}), fp16 {}, int8 dot product {}", info_.index, info_.name,
               info_.type, info_.driver_name.empty() ? "unknown" : info_.driver_name,
               info_.supports_fp16() ? "yes" : "no", info_.int8_dot_product ? "yes" : "no");
}

Context::~Context() { destroy(); }

void Context::destroy() {
  if (device_ == VK_NULL_HANDLE) return;
  vkDeviceWaitIdle(device_);
  for (auto& [key, p] : pipelines_) vkDestroyPipeline(device_, p.pipeline, nullptr);
  for (auto& [bindings, layout] : layouts_) vkDestroyPipelineLayout(device_, layout, nullptr);
  for (auto& [bindings, layout] : set_layouts_) vkDestroyDescriptorSetLayout(device_, layout, nullptr);
  for (auto& [key, module] : modules_) vkDestroyShaderModule(device_, module, nullptr);
  pipelines_.clear();
  layouts_.clear();
  set_layouts_.clear();
  modules_.clear();
  if (cache_ != VK_NULL_HANDLE) vkDestroyPipelineCache(device_, cache_, nullptr);
  if (upload_pool_ != VK_NULL_HANDLE) vkDestroyCommandPool(device_, upload_pool_, nullptr);
  allocator_.reset();
  vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

VkShaderModule Context::shader_module(const std::string& name, bool fp16) {
  const auto key = std::make_pair(name, fp16);
  if (auto it = modules_.find(key); it != modules_.end()) return it->second;
  for (const ShaderBinary& binary : shader_binaries()) {
    if (name != binary.name || binary.fp16 != fp16) continue;
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = binary.word_count * sizeof(uint32_t);
    info.pCode = binary.words;
    VkShaderModule module = VK_NULL_HANDLE;
    check_vk(vkCreateShaderModule(device_, &info, nullptr, &module), "vkCreateShaderModule");
    modules_.emplace(key, module);
    return module;
  }
  fail(ExitCode::failure, "vulkan: shader '{}' ({}) is not embedded in this build", name, fp16 ? "fp16" : "fp32");
}

VkDescriptorType descriptor_type(const PipelineKey& key, uint32_t binding) {
  return (key.texel_bindings >> binding) & 1 ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                             : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
}

VkDescriptorSetLayout Context::set_layout(const PipelineKey& pipeline) {
  const std::pair<uint32_t, uint32_t> key{pipeline.bindings, pipeline.texel_bindings};
  if (auto it = set_layouts_.find(key); it != set_layouts_.end()) return it->second;
  const uint32_t bindings = pipeline.bindings;
  std::vector<VkDescriptorSetLayoutBinding> list(bindings);
  for (uint32_t b = 0; b < bindings; ++b) {
    list[b].binding = b;
    list[b].descriptorType = descriptor_type(pipeline, b);
    list[b].descriptorCount = 1;
    list[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  info.bindingCount = bindings;
  info.pBindings = list.data();
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  check_vk(vkCreateDescriptorSetLayout(device_, &info, nullptr, &layout), "vkCreateDescriptorSetLayout");
  set_layouts_.emplace(key, layout);
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &layout;
  VkPipelineLayout pipeline_layout = VK_NULL_HANDLE;
  check_vk(vkCreatePipelineLayout(device_, &layout_info, nullptr, &pipeline_layout), "vkCreatePipelineLayout");
  layouts_.emplace(key, pipeline_layout);
  return layout;
}

const Pipeline& Context::pipeline(const PipelineKey& key) {
  std::lock_guard lock(pipeline_mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  for (int i = 0; i < 3; ++i)
    if (key.local[i] == 0 || key.local[i] > info_.max_workgroup_size[i])
      fail(ExitCode::unsupported, "vulkan: shader '{}' needs a workgroup of {} in dimension {}; device '{}' allows {}",
           key.shader, key.local[i], i, info_.name, info_.max_workgroup_size[i]);
  Pipeline p;
  p.set_layout = set_layout(key);
  p.layout = layouts_.at({key.bindings, key.texel_bindings});

  std::vector<uint32_t> values(key.local.begin(), key.local.end());
  values.insert(values.end(), key.spec.begin(), key.spec.end());
  std::vector<VkSpecializationMapEntry> entries(values.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entries[i] = {i, i * 4u, 4u};
  VkSpecializationInfo spec{static_cast<uint32_t>(entries.size()), entries.data(), values.size() * 4u, values.data()};
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = shader_module(key.shader, key.fp16);
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &spec;
  info.layout = p.layout;
  const auto start = std::chrono::steady_clock::now();
  check_vk(vkCreateComputePipelines(device_, cache_, 1, &info, nullptr, &p.pipeline), "vkCreateComputePipelines");
  spdlog::debug("vulkan: pipeline {} ({}) in {:.1f} ms", key.shader, key.fp16 ? "fp16" : "fp32",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  ++created_since_save_;
  return pipelines_.emplace(key, p).first->second;
}

void Context::save_pipeline_cache() {
  std::lock_guard lock(pipeline_mutex_);
  if (created_since_save_ == 0 || cache_path_.empty()) return;
  size_t size = 0;
  if (vkGetPipelineCacheData(device_, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<std::byte> data(size);
  if (vkGetPipelineCacheData(device_, cache_, &size, data.data()) != VK_SUCCESS) return;
  data.resize(size);
  mt::vulkan::save_pipeline_cache(cache_path_, data);
  created_since_save_ = 0;
}

void Context::submit_and_wait(VkCommandBuffer commands, VkFence fence, const char* what) {
  std::lock_guard lock(queue_mutex_);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  check_vk(vkQueueSubmit(queue_, 1, &submit, fence), what);
  check_vk(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), what);
  check_vk(vkResetFences(device_, 1, &fence), what);
}

void Context::upload(const Allocation& destination, const void* data, size_t size) {
  if (size == 0) return;
  if (size > destination.size) fail(ExitCode::failure, "vulkan: upload of {} bytes into {} bytes", size, destination.size);
  if (destination.mapped != nullptr) {
    std::memcpy(destination.mapped, data, size);
    return;
  }
  const Allocation staging = allocator_->allocate(size, MemoryKind::host);
  std::memcpy(staging.mapped, data, size);
  VkFence fence = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  try {
    VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check_vk(vkCreateFence(device_, &fence_info, nullptr, &fence), "vkCreateFence");
    std::lock_guard lock(queue_mutex_);
    VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = upload_pool_;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = 1;
    check_vk(vkAllocateCommandBuffers(device_, &allocate, &commands), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check_vk(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer");
    VkBufferCopy region{staging.offset, destination.offset, size};
    vkCmdCopyBuffer(commands, staging.buffer, destination.buffer, 1, &region);
    check_vk(vkEndCommandBuffer(commands), "vkEndCommandBuffer");
    VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    check_vk(vkQueueSubmit(queue_, 1, &submit, fence), "vkQueueSubmit (upload)");
    check_vk(vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences (upload)");
  } catch (...) {
    if (commands != VK_NULL_HANDLE) vkFreeCommandBuffers(device_, upload_pool_, 1, &commands);
    if (fence != VK_NULL_HANDLE) vkDestroyFence(device_, fence, nullptr);
    allocator_->release(staging);
    throw;
  }
  vkFreeCommandBuffers(device_, upload_pool_, 1, &commands);
  vkDestroyFence(device_, fence, nullptr);
  allocator_->release(staging);
}

}  // namespace mt::vulkan
