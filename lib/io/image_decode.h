// Image file decoding for load_image (lib/io/image.h): PNG through libpng, JPEG through
// libjpeg-turbo, binary PNM (P5, P6) parsed here. Every decoder checks the dimensions a header
// declares against a pixel limit before it allocates anything sized by them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mt {

// Images above this many pixels (64 Mi, 8192 x 8192) are refused whatever the file holds.
constexpr int64_t kMaxImagePixels = int64_t{1} << 26;

// 8-bit samples, interleaved, row-major: height x width x channels (1 or 3).
struct DecodedImage {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
};

// Decodes `bytes` (the file named `path`, for messages) to `channels` (1: gray, 3: RGB) the way
// stb_image did before: alpha dropped, palettes expanded, gray replicated to RGB, RGB to gray as
// (77 R + 150 G + 29 B) >> 8 (a JPEG's gray is its luma plane), 16-bit samples cut to their high
// byte. Errors are Error naming `path`: invalid_input for a corrupt, truncated or unknown file or
// one above `max_pixels`; unsupported for a known format mt does not read (BMP, GIF, CMYK JPEG,
// 16-bit PNM).
DecodedImage decode_image(std::span<const std::byte> bytes, const std::string& path, int channels,
                          int64_t max_pixels = kMaxImagePixels);

// The decoders, one per format (image_png.cpp, image_jpeg.cpp, image_pnm.cpp): decode to 1 or 3
// channels; a PNG or PNM decodes to the channels it holds (after dropping alpha), a JPEG to
// `channels` directly. decode_image converts to the channels asked for.
DecodedImage decode_png(std::span<const std::byte> bytes, const std::string& path, int64_t max_pixels);
DecodedImage decode_jpeg(std::span<const std::byte> bytes, const std::string& path, int channels, int64_t max_pixels);
DecodedImage decode_pnm(std::span<const std::byte> bytes, const std::string& path, int64_t max_pixels);

// Throws invalid_input("PATH: image dimensions WxH are not supported") unless both are positive
// and their product is at most max_pixels: every decoder calls it before allocating pixels.
void check_image_dimensions(int64_t width, int64_t height, const std::string& path, int64_t max_pixels);

}  // namespace mt
