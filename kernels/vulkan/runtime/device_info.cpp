#include "kernels/vulkan/runtime/device_info.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "kernels/vulkan/runtime/instance.h"
#include "kernels/vulkan/runtime/vk_util.h"
#include "lib/core/error.h"

namespace mt::vulkan {
namespace {

std::string type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

bool has_extension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
  for (const auto& extension : extensions)
    if (std::strcmp(extension.extensionName, name) == 0) return true;
  return false;
}

std::vector<VkExtensionProperties> device_extensions(VkPhysicalDevice physical) {
  uint32_t count = 0;
  check_vk(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr), "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> extensions(count);
  check_vk(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()),
           "vkEnumerateDeviceExtensionProperties");
  return extensions;
}

DeviceInfo query(VkPhysicalDevice physical, uint32_t index) {
  DeviceInfo info;
  info.index = index;
  info.physical = physical;
  const auto extensions = device_extensions(physical);
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(physical, &base);
  const bool core12 = base.apiVersion >= VK_API_VERSION_1_2;
  info.float16_int8_extension = has_extension(extensions, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  info.storage_8bit_extension = has_extension(extensions, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  info.int8_dot_product_extension = has_extension(extensions, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  // The instance asks for Vulkan 1.2 at most (instance.cpp), so the extension is the way in even
  // where the device has it in core 1.3.
  const bool has_dot = info.int8_dot_product_extension;

  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maintenance3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceShaderIntegerDotProductProperties dot_properties{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES};
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties.pNext = &maintenance3;
  void** properties_tail = &maintenance3.pNext;
  const bool has_driver = core12 || has_extension(extensions, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  if (has_driver) {
    *properties_tail = &driver;
    properties_tail = &driver.pNext;
  }
  if (has_dot) *properties_tail = &dot_properties;
  vkGetPhysicalDeviceProperties2(physical, &properties);
  const VkPhysicalDeviceProperties& p = properties.properties;
  info.name = p.deviceName;
  info.type = type_name(p.deviceType);
  info.api_version = p.apiVersion;
  info.driver_version = p.driverVersion;
  info.vendor_id = p.vendorID;
  info.device_id = p.deviceID;
  std::memcpy(info.pipeline_cache_uuid.data(), p.pipelineCacheUUID, VK_UUID_SIZE);
  if (has_driver) {
    info.driver_name = driver.driverName;
    info.driver_info = driver.driverInfo;
  }
  const VkPhysicalDeviceLimits& limits = p.limits;
  info.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    info.max_workgroup_size[i] = limits.maxComputeWorkGroupSize[i];
    info.max_workgroup_count[i] = limits.maxComputeWorkGroupCount[i];
  }
  info.max_shared_memory = limits.maxComputeSharedMemorySize;
  info.max_storage_buffer_range = limits.maxStorageBufferRange;
  info.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;
  info.min_texel_buffer_offset_alignment = limits.minTexelBufferOffsetAlignment;
  info.max_texel_buffer_elements = limits.maxTexelBufferElements;
  info.max_memory_allocation = maintenance3.maxMemoryAllocationSize;

  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  for (uint32_t h = 0; h < memory.memoryHeapCount; ++h)
    if (memory.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.device_local_bytes = std::max<uint64_t>(info.device_local_bytes, memory.memoryHeaps[h].size);

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());
  // Prefer a compute queue without graphics (an async compute queue), else any compute queue.
  for (int pass = 0; pass < 2 && info.compute_queue_family < 0; ++pass)
    for (uint32_t f = 0; f < family_count; ++f) {
      const VkQueueFlags flags = families[f].queueFlags;
      if (!(flags & VK_QUEUE_COMPUTE_BIT) || (pass == 0 && (flags & VK_QUEUE_GRAPHICS_BIT))) continue;
      info.compute_queue_family = static_cast<int>(f);
      if (families[f].timestampValidBits > 0) info.timestamp_period_ns = limits.timestampPeriod;
      break;
    }

  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderFloat16Int8Features float16_int8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceShaderIntegerDotProductFeatures dot{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &storage16;
  void** tail = &storage16.pNext;
  if (core12 || info.float16_int8_extension) {
    *tail = &float16_int8;
    tail = &float16_int8.pNext;
  }
  if (core12 || info.storage_8bit_extension) {
    *tail = &storage8;
    tail = &storage8.pNext;
  }
  if (has_dot) *tail = &dot;
  vkGetPhysicalDeviceFeatures2(physical, &features);
  info.int8_dot_product = dot.shaderIntegerDotProduct == VK_TRUE;
  info.int8_dot_product_accelerated =
      info.int8_dot_product && dot_properties.integerDotProduct4x8BitPackedSignedAccelerated == VK_TRUE;
  info.fp16_storage = storage16.storageBuffer16BitAccess == VK_TRUE;
  info.fp16_arithmetic = float16_int8.shaderFloat16 == VK_TRUE;
  info.int8_arithmetic = float16_int8.shaderInt8 == VK_TRUE;
  info.int8_storage = storage8.storageBuffer8BitAccess == VK_TRUE;
  // A testing knob (mt-run(1), ENVIRONMENT): the "device has no fp16" refusal cannot be reached on
  // lavapipe, which has fp16, without making the device report none.
  if (const char* off = std::getenv("MT_VULKAN_DISABLE_FP16"); off != nullptr && std::strcmp(off, "1") == 0) {
    info.fp16_storage = false;
    info.fp16_arithmetic = false;
  }
  return info;
}

std::string bytes_str(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= (uint64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{} KiB", bytes >> 10);
}

const char* yes_no(bool value) { return value ? "yes" : "no"; }

}  // namespace

std::vector<DeviceInfo> enumerate_devices() {
  VkInstance vk = instance();
  uint32_t count = 0;
  check_vk(vkEnumeratePhysicalDevices(vk, &count, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> physical(count);
  check_vk(vkEnumeratePhysicalDevices(vk, &count, physical.data()), "vkEnumeratePhysicalDevices");
  std::vector<DeviceInfo> devices;
  for (uint32_t i = 0; i < count; ++i) devices.push_back(query(physical[i], i));
  return devices;
}

std::string format_device_list(std::string_view indent) {
  if (auto reason = vulkan_unavailable_reason()) fail(ExitCode::unsupported, "vulkan: {}", *reason);
  std::string text;
  for (const DeviceInfo& d : enumerate_devices()) {
    text += fmt::format("{}{}: {} ({}), Vulkan {}\n", indent, d.index, d.name, d.type, version_str(d.api_version));
    text += fmt::format("{}   driver: {}{}{} (version {:#x}), vendor {:#06x} device {:#06x}\n",
                        indent, d.driver_name.empty() ? "unknown" : d.driver_name, d.driver_info.empty() ? "" : " ", d.driver_info,
                        d.driver_version, d.vendor_id, d.device_id);
    text += fmt::format("{}   limits: workgroup {} invocations ({}x{}x{}), shared memory {}, storage buffer range {}, "
                        "device-local memory {}, timestamps {}\n",
                        indent, d.max_workgroup_invocations, d.max_workgroup_size[0], d.max_workgroup_size[1],
                        d.max_workgroup_size[2], bytes_str(d.max_shared_memory), bytes_str(d.max_storage_buffer_range),
                        bytes_str(d.device_local_bytes),
                        d.timestamp_period_ns > 0 ? fmt::format("yes ({} ns/tick)", d.timestamp_period_ns) : "no");
    text += fmt::format(
        "{}   features: fp16 storage {}, fp16 arithmetic {}, int8 storage {}, int8 arithmetic {}, "
        "int8 dot product {}; --precision fp16 {}\n",
        indent, yes_no(d.fp16_storage), yes_no(d.fp16_arithmetic), yes_no(d.int8_storage), yes_no(d.int8_arithmetic),
        !d.int8_dot_product              ? "no"
        : d.int8_dot_product_accelerated ? "yes (accelerated)"
                                         : "yes (not accelerated)",
        d.supports_fp16() ? "available" : "not available");
    if (d.compute_queue_family < 0) text += fmt::format("{}   no compute queue: mt cannot use this device\n", indent);
  }
  return text;
}

}  // namespace mt::vulkan
