// libFuzzer target: the image readers (libpng, libjpeg-turbo and our PNM parser behind
// decode_image), then, for what decodes, the whole loader (resizing and normalising to a small
// fixed size, the path mt-run --input IMAGE --size takes). load_image reads a path, so the bytes go
// to an anonymous memory file named through /proc/self/fd.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>

#include "lib/core/error.h"
#include "lib/io/image.h"
#include "lib/io/image_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Images up to 4 Mi pixels: larger ones the loader accepts (up to 64 Mi) decode correctly but
  // take seconds under the sanitizers, and time spent there finds nothing; the limit check itself
  // is the same code at any limit.
  constexpr int64_t kFuzzMaxPixels = int64_t{1} << 22;
  const std::span bytes(reinterpret_cast<const std::byte*>(data), size);
  try {
    mt::decode_image(bytes, "fuzz", 1, kFuzzMaxPixels);
    mt::decode_image(bytes, "fuzz", 3, kFuzzMaxPixels);
  } catch (const mt::Error&) {
    return 0;
  }
  static const int fd = memfd_create("fuzz_image", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    mt::load_image(path, mt::ImagePreprocess{.height = 16, .width = 16, .mean = {0.5f, 0.5f, 0.5f}, .std = {0.25f, 0.25f, 0.25f}});
    mt::load_image(path, mt::ImagePreprocess{.channels = 1});
  } catch (const mt::Error&) {
  }
  return 0;
}
