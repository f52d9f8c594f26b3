// Small helpers shared by the Vulkan backend: Vulkan through volk, VkResult checks that throw
// mt::Error naming the call, and version formatting.
#pragma once

#include <volk.h>

#include <string>
#include <string_view>

namespace mt::vulkan {

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" for a result code.
std::string_view result_name(VkResult result);

// Throws Error(failure) "vulkan: CALL failed: RESULT" unless result is VK_SUCCESS.
void check_vk(VkResult result, std::string_view call);

// "1.3.230" for a Vulkan API version.
std::string version_str(uint32_t version);

}  // namespace mt::vulkan
