// libFuzzer target: the image loader (stb_image decoding, then resizing and normalising to a
// small fixed size, the path mt-run --input IMAGE --size takes). load_image reads a path, so
// the bytes go to an anonymous memory file named through /proc/self/fd.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "lib/core/error.h"
#include "lib/io/image.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
