// The Vulkan backend: GLSL compute shaders on channel-packed storage buffers, Vulkan loaded at run
// time (volk), every pipeline created and the whole graph recorded at planning. Also what mt-run
// --list-devices shows.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lib/runtime/backend.h"

namespace mt {

std::unique_ptr<Backend> make_vulkan_backend();

// Why this machine cannot run the vulkan backend (no loader, no device), or nullopt when it can:
// the counterpart of PyTorch's is_vulkan_available().
std::optional<std::string> vulkan_unavailable_reason();

// The devices, one block each (type, driver, limits, fp16/int8 features), every line starting with
// `indent`, for --list-devices. Throws Error(unsupported) with one line when there is no device.
std::string vulkan_device_list(std::string_view indent = "");

// "NAME (DRIVER INFO)" of device `gpu_index` (mt-bench's report). Throws Error(unsupported) with one
// line when there is no loader or no such device.
std::string vulkan_device_name(int gpu_index);

}  // namespace mt
