// The process-wide Vulkan instance: the loader found at run time through volk, the instance created
// once, and the validation mode (MT_VULKAN_VALIDATION=1) whose error messages become failures.
#pragma once

#include <volk.h>

#include <optional>
#include <string>

namespace mt::vulkan {

// Why Vulkan cannot be used here ("no Vulkan loader (libvulkan.so.1) found", "no Vulkan device"),
// or nullopt when at least one physical device is present. Never throws; creates the instance.
std::optional<std::string> vulkan_unavailable_reason();

// The instance, creating it on first use. Throws Error(unsupported) with one line when there is no
// loader or the instance cannot be created.
VkInstance instance();

// True when MT_VULKAN_VALIDATION=1: VK_LAYER_KHRONOS_validation is enabled with a debug messenger
// that logs every message and counts errors.
bool validation_enabled();

// Throws Error(failure) "vulkan validation: N errors during WHEN; first: ..." if the validation layer
// reported an error since the last call (and clears the count).
void check_validation(const char* when);

}  // namespace mt::vulkan
