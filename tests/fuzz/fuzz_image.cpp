// libFuzzer target: the image loader (stb_image decoding, then resizing and normalising to a
// small fixed size, the path mt-run --input IMAGE --size takes). load_image reads a path, so
// the bytes go to an anonymous memory file named through /proc/self/fd.
#include <stb_image.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "lib/core/error.h"
#include "lib/io/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Images the loader accepts as large as they are (4 Mi to 64 Mi pixels, its limit) decode
  // correctly but take seconds under the sanitizers: time spent there finds nothing. Smaller and
  // larger ones (refused at once) are fuzzed. JPEG and PNM headers are not asked here: reading
  // them is what load_image guards (Huffman tables, overflowing numbers), so scripts/fuzz.sh gives
  // this target a longer timeout.
  int width = 0, height = 0, channels = 0;
  if (size > 0 && data[0] != 0xFF && data[0] != 'P' && stbi_info_from_memory(data, static_cast<int>(size), &width, &height, &channels)) {
    const int64_t pixels = int64_t{width} * height;
    if (pixels > (int64_t{1} << 22) && pixels <= (int64_t{1} << 26)) return 0;
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
