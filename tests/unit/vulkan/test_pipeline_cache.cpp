// The on-disk pipeline cache (kernels/vulkan/runtime/pipeline_cache.h): what is saved loads back
// unchanged, and a file that is missing, truncated, damaged, not ours or made by another device
// loads as nothing (the driver then compiles afresh) instead of reaching the driver. No device
// needed: the device is described, not opened.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "kernels/vulkan/runtime/pipeline_cache.h"

using namespace mt;
using namespace mt::vulkan;

namespace {

DeviceInfo test_device() {
  DeviceInfo device;
  device.vendor_id = 0x1234;
  device.device_id = 0x5678;
  device.driver_version = 0xabc;
  for (size_t i = 0; i < device.pipeline_cache_uuid.size(); ++i)
    device.pipeline_cache_uuid[i] = static_cast<uint8_t>(i);
  return device;
}

// Driver cache data as a driver writes it: VkPipelineCacheHeaderVersionOne, then its own bytes.
std::vector<std::byte> driver_data(const DeviceInfo& device, size_t payload) {
  VkPipelineCacheHeaderVersionOne header{};
  header.headerSize = sizeof header;
  header.headerVersion = VK_PIPELINE_CACHE_HEADER_VERSION_ONE;
  header.vendorID = device.vendor_id;
  header.deviceID = device.device_id;
  std::memcpy(header.pipelineCacheUUID, device.pipeline_cache_uuid.data(), VK_UUID_SIZE);
  std::vector<std::byte> data(sizeof header + payload);
  std::memcpy(data.data(), &header, sizeof header);
  for (size_t i = 0; i < payload; ++i) data[sizeof header + i] = static_cast<std::byte>(i * 7 + 3);
  return data;
}

std::vector<char> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_file(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("mt_test_pipeline_cache_" + std::to_string(::getpid()));
  ~TempDir() { std::filesystem::remove_all(path); }
};

// Sets an environment variable (or unsets it, for nullopt) for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("pipeline cache: saved data loads back, into a directory created for it") {
  TempDir dir;
  const DeviceInfo device = test_device();
  const std::string path = (dir.path / "nested" / "device.cache").string();
  const std::vector<std::byte> data = driver_data(device, 1000);
  save_pipeline_cache(path, data);
  CHECK(load_pipeline_cache(path, device) == data);
  // The file is the data behind a 24-byte header (magic, size, checksum).
  CHECK(std::filesystem::file_size(path) == data.size() + 24);
  // Saving again replaces it.
  const std::vector<std::byte> other = driver_data(device, 10);
  save_pipeline_cache(path, other);
  CHECK(load_pipeline_cache(path, device) == other);
}

TEST_CASE("pipeline cache: missing, truncated, damaged and foreign files load as nothing") {
  TempDir dir;
  const DeviceInfo device = test_device();
  const std::filesystem::path good = dir.path / "good.cache";
  save_pipeline_cache(good.string(), driver_data(device, 256));
  const std::vector<char> bytes = read_file(good);
  REQUIRE(bytes.size() == 24 + 32 + 256);
  auto load_variant = [&](const std::vector<char>& variant) {
    const std::filesystem::path path = dir.path / "variant.cache";
    write_file(path, variant);
    return load_pipeline_cache(path.string(), device);
  };
  CHECK(!load_variant(bytes).empty());  // the unchanged bytes still load

  CHECK(load_pipeline_cache((dir.path / "absent.cache").string(), device).empty());
  CHECK(load_pipeline_cache("", device).empty());
  CHECK(load_pipeline_cache(dir.path.string(), device).empty());  // a directory, not a file

  // Truncated anywhere: inside the header, at its end, inside the data.
  for (size_t size : {size_t{0}, size_t{10}, size_t{24}, size_t{24 + 16}, bytes.size() - 1}) {
    INFO("truncated to ", size, " bytes");
    CHECK(load_variant(std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size))).empty());
  }
  // Extended by a byte.
  std::vector<char> longer = bytes;
  longer.push_back('x');
  CHECK(load_variant(longer).empty());
  // One bit flipped in the driver's data: the checksum no longer matches.
  std::vector<char> damaged = bytes;
  damaged[24 + 32 + 100] ^= 0x10;
  CHECK(load_variant(damaged).empty());
  // Not an mt cache file.
  std::vector<char> foreign = bytes;
  foreign[0] = 'X';
  CHECK(load_variant(foreign).empty());

  // A well-formed file from another device, or with data shorter than the driver's header.
  DeviceInfo other = device;
  other.device_id = 0x9999;
  CHECK(load_pipeline_cache(good.string(), other).empty());
  other = device;
  other.pipeline_cache_uuid[15] ^= 1;
  CHECK(load_pipeline_cache(good.string(), other).empty());
  const std::filesystem::path tiny = dir.path / "tiny.cache";
  save_pipeline_cache(tiny.string(), std::vector<std::byte>(8, std::byte{1}));
  CHECK(std::filesystem::exists(tiny));
  CHECK(load_pipeline_cache(tiny.string(), device).empty());
}

TEST_CASE("pipeline cache: a failed save is not an error") {
  TempDir dir;
  std::filesystem::create_directories(dir.path);
  const std::filesystem::path file = dir.path / "file";
  write_file(file, {'x'});
  // The directory would have to be inside a regular file: logged, nothing thrown, nothing written.
  CHECK_NOTHROW(save_pipeline_cache((file / "device.cache").string(), driver_data(test_device(), 4)));
  CHECK(read_file(file) == std::vector<char>{'x'});
  CHECK_NOTHROW(save_pipeline_cache("", driver_data(test_device(), 4)));  // no cache directory: nothing to do
}

TEST_CASE("pipeline cache: one file per device, driver and set of shaders") {
  const DeviceInfo device = test_device();
  const std::string hash = fmt::format("{:016x}", shaders_hash());
  {
    ScopedEnv own("MT_CACHE_DIR", "/tmp/mt-cache-test");
    CHECK(pipeline_cache_path(device) ==
          "/tmp/mt-cache-test/vulkan-1234-5678-abc-000102030405060708090a0b0c0d0e0f-" + hash + ".cache");
  }
  {
    ScopedEnv own("MT_CACHE_DIR", "");
    CHECK(pipeline_cache_path(device).empty());  // set but empty: no cache file
  }
  {
    ScopedEnv own("MT_CACHE_DIR", std::nullopt);
    ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
    CHECK(pipeline_cache_path(device).rfind("/tmp/xdg/mt/vulkan-1234-5678-", 0) == 0);
  }
  {
    ScopedEnv own("MT_CACHE_DIR", std::nullopt);
    ScopedEnv xdg("XDG_CACHE_HOME", std::nullopt);
    ScopedEnv home("HOME", "/home/someone");
    CHECK(pipeline_cache_path(device).rfind("/home/someone/.cache/mt/vulkan-", 0) == 0);
  }
  CHECK(shaders_hash() == shaders_hash());
  CHECK(shaders_hash() != 1469598103934665603ull);  // the FNV-1a basis: there are shaders to hash
}
