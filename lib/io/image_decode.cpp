#include "lib/io/image_decode.h"

#include <cstring>

#include "lib/core/error.h"

namespace mt {
namespace {

bool starts_with(std::span<const std::byte> bytes, std::string_view magic) {
  return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

// RGB to gray with stb_image's integer weights (ITU-R BT.601 luma in eighths of 256), so that
// grayscale inputs decode as they did.
DecodedImage to_gray(DecodedImage rgb) {
  DecodedImage gray{.width = rgb.width, .height = rgb.height, .channels = 1, .pixels = {}};
  gray.pixels.resize(rgb.pixels.size() / 3);
  for (size_t i = 0; i < gray.pixels.size(); ++i) {
    const unsigned r = rgb.pixels[3 * i], g = rgb.pixels[3 * i + 1], b = rgb.pixels[3 * i + 2];
    gray.pixels[i] = static_cast<uint8_t>((r * 77 + g * 150 + b * 29) >> 8);
  }
  return gray;
}

DecodedImage to_rgb(DecodedImage gray) {
  DecodedImage rgb{.width = gray.width, .height = gray.height, .channels = 3, .pixels = {}};
  rgb.pixels.resize(gray.pixels.size() * 3);
  for (size_t i = 0; i < gray.pixels.size(); ++i) rgb.pixels[3 * i] = rgb.pixels[3 * i + 1] = rgb.pixels[3 * i + 2] = gray.pixels[i];
  return rgb;
}

}  // namespace

void check_image_dimensions(int64_t width, int64_t height, const std::string& path, int64_t max_pixels) {
  if (width <= 0 || height <= 0 || width > max_pixels || height > max_pixels || width * height > max_pixels)
    invalid_input("{}: image dimensions {}x{} are not supported", path, width, height);
}

DecodedImage decode_image(std::span<const std::byte> bytes, const std::string& path, int channels, int64_t max_pixels) {
  DecodedImage image;
  if (starts_with(bytes, "\x89PNG\r\n\x1a\n")) {
    image = decode_png(bytes, path, max_pixels);
  } else if (starts_with(bytes, "\xff\xd8")) {
    image = decode_jpeg(bytes, path, channels, max_pixels);
  } else if (starts_with(bytes, "P5") || starts_with(bytes, "P6")) {
    image = decode_pnm(bytes, path, max_pixels);
  } else if (starts_with(bytes, "BM") || starts_with(bytes, "GIF8") || starts_with(bytes, "8BPS") || starts_with(bytes, "#?RADIANCE")) {
    unsupported("{}: BMP, GIF, PSD and HDR images are not supported; convert it to PNG", path);
  } else {
    invalid_input("{}: cannot decode image: not a PNG, JPEG or binary PNM (P5, P6) file", path);
  }
  if (image.channels == 3 && channels == 1) return to_gray(std::move(image));
  if (image.channels == 1 && channels == 3) return to_rgb(std::move(image));
  return image;
}

}  // namespace mt
