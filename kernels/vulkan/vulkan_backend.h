// The Vulkan backend: GLSL compute shaders on channel-packed storage buffers, Vulkan loaded at run
// time (volk), every pipeline created and the whole graph recorded at planning.
#pragma once

#include <memory>

#include "lib/runtime/backend.h"

namespace mt {

// The backend; its devices() and describe() answer mt-run --list-devices and mt-bench's report.
std::unique_ptr<Backend> make_vulkan_backend();

}  // namespace mt
