// What mt needs to know about a Vulkan physical device: identity, driver, the limits the planner
// respects and the fp16/int8 features; and the device list mt-run --list-devices prints.
#pragma once

#include <volk.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mt::vulkan {

struct DeviceInfo {
  uint32_t index = 0;  // in vkEnumeratePhysicalDevices order: what --gpu N picks
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  std::string name;
  std::string type;  // "discrete GPU", "integrated GPU", "virtual GPU", "CPU", "other"
  uint32_t api_version = 0;
  uint32_t driver_version = 0;
  std::string driver_name;  // "llvmpipe" (lavapipe), "NVIDIA", ...; empty when the device cannot say
  std::string driver_info;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::array<uint8_t, VK_UUID_SIZE> pipeline_cache_uuid{};

  // Limits.
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_size{};
  std::array<uint32_t, 3> max_workgroup_count{};
  uint32_t max_shared_memory = 0;
  uint32_t max_storage_buffer_range = 0;
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t min_texel_buffer_offset_alignment = 0;
  uint32_t max_texel_buffer_elements = 0;
  uint64_t max_memory_allocation = 0;  // 0 when the device does not report it
  uint64_t device_local_bytes = 0;     // largest device-local heap
  float timestamp_period_ns = 0;       // 0: the compute queue has no timestamps
  int compute_queue_family = -1;       // -1: no compute queue

  // Features (what the device supports, not what mt enabled).
  bool fp16_storage = false;     // storageBuffer16BitAccess
  bool fp16_arithmetic = false;  // shaderFloat16
  bool int8_storage = false;     // storageBuffer8BitAccess
  bool int8_arithmetic = false;  // shaderInt8
  bool float16_int8_extension = false;  // VK_KHR_shader_float16_int8 (needed below Vulkan 1.2)
  bool storage_8bit_extension = false;  // VK_KHR_8bit_storage
  // int8 dot products in shaders (VK_KHR_shader_integer_dot_product; core in Vulkan 1.3, but mt's
  // instance asks for 1.2, so it always enables the extension): the feature, the extension, and
  // whether the device says the packed signed 4x8 form runs faster than the equivalent multiplies
  // and adds (it may emulate them).
  bool int8_dot_product = false;
  bool int8_dot_product_extension = false;
  bool int8_dot_product_accelerated = false;

  // fp16 plans need both 16-bit storage buffers and fp16 arithmetic in shaders.
  bool supports_fp16() const { return fp16_storage && fp16_arithmetic; }
};

// Every physical device, in order. Throws Error(unsupported) when there is no loader.
std::vector<DeviceInfo> enumerate_devices();

// Text for mt-run --list-devices: one block per device with type, driver, limits and features.
// Throws Error(unsupported) with one line when no loader or no device is present.
std::string format_device_list(std::string_view indent = "");

}  // namespace mt::vulkan
