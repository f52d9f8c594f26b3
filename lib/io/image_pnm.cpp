// Binary PNM: P5 (gray) and P6 (RGB). The header is the magic, then width, height and maxval as
// decimal numbers separated by whitespace and '#' comments, then one whitespace byte, then the
// pixels, one byte per sample when maxval < 256 (16-bit samples are not read).
#include <algorithm>
#include <cstring>

#include "lib/core/error.h"
#include "lib/io/image_decode.h"

namespace mt {

DecodedImage decode_pnm(std::span<const std::byte> file, const std::string& path, int64_t max_pixels) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(file.data());
  const size_t size = file.size();
  const int channels = bytes[1] == '6' ? 3 : 1;
  size_t at = 2;
  auto next = [&]() -> int { return at < size ? bytes[at++] : -1; };
  auto is_space = [](int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  int c = next();
  uint64_t fields[3] = {};
  for (uint64_t& field : fields) {
    for (;;) {  // whitespace and comments
      while (c >= 0 && is_space(c)) c = next();
      if (c != '#') break;
      while (c >= 0 && c != '\n' && c != '\r') c = next();
    }
    if (c < '0' || c > '9') invalid_input("{}: cannot decode image: PNM header: expected a number at byte {}", path, at - (c >= 0));
    for (; c >= '0' && c <= '9'; c = next()) {
      field = field * 10 + static_cast<uint64_t>(c - '0');
      if (field > (uint64_t{1} << 24)) invalid_input("{}: PNM header number above 2^24", path);
    }
  }
  const uint64_t width = fields[0], height = fields[1], maxval = fields[2];
  if (maxval > 255) unsupported("{}: 16-bit PNM images (maxval {}) are not supported; use 8 bits or PNG", path, maxval);
  if (maxval == 0) invalid_input("{}: cannot decode image: PNM maxval is 0", path);
  check_image_dimensions(static_cast<int64_t>(width), static_cast<int64_t>(height), path, max_pixels);
  // `c` is the byte after maxval, already consumed: the pixels start at `at`.
  const uint64_t needed = width * height * channels;
  if (c < 0 || needed > size - at)
    invalid_input("{}: truncated PNM image: {}x{} needs {} bytes of pixels, the file has {}", path, width, height, needed,
                  c < 0 ? 0 : size - at);
  DecodedImage image{.width = static_cast<int>(width), .height = static_cast<int>(height), .channels = channels, .pixels = {}};
  image.pixels.assign(bytes + at, bytes + at + needed);
  // Samples run from 0 to maxval: scaled to 0..255 (a no-op for the usual maxval 255).
  if (maxval != 255)
    for (uint8_t& sample : image.pixels) sample = static_cast<uint8_t>((std::min<uint64_t>(sample, maxval) * 255 + maxval / 2) / maxval);
  return image;
}

}  // namespace mt
