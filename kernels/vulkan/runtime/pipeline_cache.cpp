#include "kernels/vulkan/runtime/pipeline_cache.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "kernels/vulkan/runtime/shader_binaries.h"
#include "lib/core/cache_dir.h"
#include "lib/core/error.h"
#include "lib/core/file_io.h"

namespace mt::vulkan {
namespace {

// File layout: this header, then the driver's cache data. The checksum catches truncated or
// damaged files, which some drivers would otherwise crash on.
struct FileHeader {
  char magic[8];  // "mtvkpc1\0"
  uint64_t size;  // bytes of cache data after the header
  uint64_t fnv1a;
};
constexpr char kMagic[8] = {'m', 't', 'v', 'k', 'p', 'c', '1', '\0'};

uint64_t fnv1a(const void* data, size_t size, uint64_t hash = 1469598103934665603ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

std::string hex(const uint8_t* data, size_t size) {
  std::string text;
  for (size_t i = 0; i < size; ++i) text += fmt::format("{:02x}", data[i]);
  return text;
}

}  // namespace

uint64_t shaders_hash() {
  uint64_t hash = 1469598103934665603ull;
  for (const ShaderBinary& shader : shader_binaries()) {
    hash = fnv1a(shader.name, std::strlen(shader.name), hash);
    hash = fnv1a(&shader.fp16, sizeof shader.fp16, hash);
    hash = fnv1a(shader.words, shader.word_count * sizeof(uint32_t), hash);
  }
  return hash;
}

std::string pipeline_cache_path(const DeviceInfo& device) {
  const std::filesystem::path dir = cache_directory();
  if (dir.empty()) return "";  // MT_CACHE_DIR= (empty), or no home: no pipeline cache file
  const std::string name = fmt::format("vulkan-{:04x}-{:04x}-{:x}-{}-{:016x}.cache", device.vendor_id, device.device_id,
                                       device.driver_version,
                                       hex(device.pipeline_cache_uuid.data(), device.pipeline_cache_uuid.size()),
                                       shaders_hash());
  return (dir / name).string();
}

std::vector<std::byte> load_pipeline_cache(const std::string& path, const DeviceInfo& device) {
  std::error_code error;
  if (path.empty() || !std::filesystem::is_regular_file(path, error)) {
    spdlog::debug("vulkan: no pipeline cache at {}", path.empty() ? "(no cache directory)" : path);
    return {};
  }
  InputBytes file;
  try {
    file = read_input(path);
  } catch (const Error& e) {
    spdlog::debug("vulkan: ignoring pipeline cache: {}", e.what());
    return {};
  }
  auto ignore = [&](const char* why) {
    spdlog::debug("vulkan: ignoring pipeline cache {}: {}", path, why);
    return std::vector<std::byte>{};
  };
  FileHeader header;
  if (file.size < sizeof header) return ignore("shorter than its header");
  std::memcpy(&header, file.data, sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return ignore("not an mt pipeline cache");
  if (header.size != file.size - sizeof header) return ignore("truncated or extended");
  const std::byte* data = file.data + sizeof header;
  if (fnv1a(data, header.size) != header.fnv1a) return ignore("checksum mismatch");
  // The driver's own header (VkPipelineCacheHeaderVersionOne): vendor, device and UUID must match.
  VkPipelineCacheHeaderVersionOne vk_header;
  if (header.size < sizeof vk_header) return ignore("no Vulkan cache header");
  std::memcpy(&vk_header, data, sizeof vk_header);
  if (vk_header.vendorID != device.vendor_id || vk_header.deviceID != device.device_id ||
      std::memcmp(vk_header.pipelineCacheUUID, device.pipeline_cache_uuid.data(), VK_UUID_SIZE) != 0)
    return ignore("made by another device or driver");
  return {data, data + header.size};
}

void save_pipeline_cache(const std::string& path, std::span<const std::byte> data) {
  if (path.empty()) return;
  try {
    std::error_code error;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), error);
    if (error) fail(ExitCode::failure, "cannot create {}: {}", std::filesystem::path(path).parent_path().string(), error.message());
    FileHeader header{};
    std::memcpy(header.magic, kMagic, sizeof kMagic);
    header.size = data.size();
    header.fnv1a = fnv1a(data.data(), data.size());
    OutputFile file(path, true);
    file.write(&header, sizeof header);
    file.write(data.data(), data.size());
    file.commit();
    spdlog::debug("vulkan: pipeline cache {}: saved {} bytes", path, data.size());
  } catch (const std::exception& e) {
    spdlog::warn("vulkan: pipeline cache not saved: {}", e.what());
  }
}

}  // namespace mt::vulkan
