// The on-disk VkPipelineCache, so that the second start of a model does not compile its pipelines
// again: one file per device, driver version and set of shaders, under $XDG_CACHE_HOME/mt (or
// ~/.cache/mt), written atomically and checked on load (a damaged file is ignored).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/vulkan/runtime/device_info.h"

namespace mt::vulkan {

// FNV-1a over the SPIR-V of every embedded shader: a new build with changed shaders uses a new file.
uint64_t shaders_hash();

// "<dir>/vulkan-<vendor>-<device>-<driver version>-<pipeline cache UUID>-<shaders hash>.cache" where dir
// is $MT_CACHE_DIR, else $XDG_CACHE_HOME/mt, else ~/.cache/mt; "" (no cache file) when MT_CACHE_DIR is
// set but empty or none of the three is known.
std::string pipeline_cache_path(const DeviceInfo& device);

// The cache data stored at `path` for `device`, or empty when there is no file or it is damaged,
// truncated or from another device (logged at debug level; never an error).
std::vector<std::byte> load_pipeline_cache(const std::string& path, const DeviceInfo& device);

// Writes `data` to `path` atomically, creating the directory. Failures are logged as warnings: a
// read-only home must not stop inference.
void save_pipeline_cache(const std::string& path, std::span<const std::byte> data);

}  // namespace mt::vulkan
