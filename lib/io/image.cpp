#include "lib/io/image.h"

#include <stb_image.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>

#include "lib/core/error.h"

namespace mt {
namespace {

// Decoded images above this many pixels (64 Mi, 8192 x 8192) are refused before stb allocates
// them. The dimensions come from the header, unchecked against the (compressed) data: a 146-byte
// GIF declaring 7967 x 22815 made stb_image allocate and clear 1.6 GB before finding no pixels.
constexpr int64_t kMaxPixels = int64_t{1} << 26;

// Per output coordinate: the first source index and the normalised weights of the source pixels
// it mixes.
struct Taps {
  std::vector<int> first;
  std::vector<int> count;
  std::vector<float> weights;  // count[i] entries per output i, at offset i * stride
  int stride = 0;
};

Taps compute_taps(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double support = std::max(scale, 1.0);  // the triangle's half-width in source pixels
  Taps taps;
  taps.stride = static_cast<int>(std::ceil(support)) * 2 + 1;
  taps.first.resize(out_size);
  taps.count.resize(out_size);
  taps.weights.assign(static_cast<size_t>(out_size) * taps.stride, 0.0f);
  for (int i = 0; i < out_size; ++i) {
    const double center = (i + 0.5) * scale;  // in source pixel units, edges at integers
    const int lo = std::max(0, static_cast<int>(std::floor(center - support)));
    const int hi = std::min(in_size, static_cast<int>(std::ceil(center + support)));
    double total = 0;
    int n = 0;
    float* w = &taps.weights[static_cast<size_t>(i) * taps.stride];
    for (int j = lo; j < hi && n < taps.stride; ++j, ++n) {
      const double distance = std::abs(j + 0.5 - center) / support;
      w[n] = static_cast<float>(std::max(0.0, 1.0 - distance));
      total += w[n];
    }
    if (total <= 0) {  // can only happen at a degenerate edge: take the nearest pixel
      n = 1;
      w[0] = 1;
      taps.first[i] = std::clamp(static_cast<int>(center), 0, in_size - 1);
    } else {
      for (int k = 0; k < n; ++k) w[k] = static_cast<float>(w[k] / total);
      taps.first[i] = lo;
    }
    taps.count[i] = n;
  }
  return taps;
}

// Binary PNM (P5, P6) as stb_image parses its header: magic, then width, height and maxval as
// decimal numbers separated by whitespace and '#' comments, then one whitespace byte, then the
// pixels. Refused here, because stb_image mishandles them: a truncated file (it leaves the rest of
// its buffer uninitialised) and 16-bit samples (maxval > 255: it reads them in host byte order,
// and converting their channel count reads past its buffer). Other files pass unchecked.
void check_pnm(const unsigned char* bytes, size_t size, const std::string& path) {
  if (size < 2 || bytes[0] != 'P' || (bytes[1] != '5' && bytes[1] != '6')) return;
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
    for (; c >= '0' && c <= '9'; c = next()) {
      field = field * 10 + static_cast<uint64_t>(c - '0');
      if (field > (uint64_t{1} << 24)) invalid_input("{}: PNM header number above 2^24", path);  // stb's limit too
    }
  }
  if (fields[2] > 255) unsupported("{}: 16-bit PNM images (maxval {}) are not supported; use 8 bits or PNG", path, fields[2]);
  // `c` is the byte after maxval, already consumed: the pixels start at `at`.
  const uint64_t needed = fields[0] * fields[1] * (bytes[1] == '6' ? 3 : 1);
  if (c < 0 || needed > size - at)
    invalid_input("{}: truncated PNM image: {}x{} needs {} bytes of pixels, the file has {}", path, fields[0], fields[1],
                  needed, c < 0 ? 0 : size - at);
}

// Uncompressed BMP: the pixel rows (each padded to 4 bytes) start at the offset the file header
// gives. stb_image reads zeros past the end of a short file, so a 62-byte file declaring 8 million
// x 3 pixels decoded to a black image of 25 million pixels; refused here as truncated.
void check_bmp(const unsigned char* bytes, size_t size, const std::string& path) {
  if (size < 30 || bytes[0] != 'B' || bytes[1] != 'M') return;
  auto le = [&](size_t at, int n) {
    uint64_t value = 0;
    for (int i = n - 1; i >= 0; --i) value = value << 8 | (at + i < size ? bytes[at + i] : 0);
    return value;
  };
  const uint64_t offset = le(10, 4), header = le(14, 4);
  uint64_t width = 0, height = 0, bits = 0, compression = 0;
  if (header == 12) {  // OS/2 BITMAPCOREHEADER
    width = le(18, 2), height = le(20, 2), bits = le(24, 2);
  } else {
    width = le(18, 4), height = le(22, 4), bits = le(28, 2), compression = le(30, 4);
    if (height >= (uint64_t{1} << 31)) height = (uint64_t{1} << 32) - height;  // negative: rows top-down
  }
  if (compression != 0 && compression != 3) return;  // run-length encoded (or invalid: stb refuses it)
  if (width > (uint64_t{1} << 24) || height > (uint64_t{1} << 24) || bits > 32) return;  // stb refuses these
  const uint64_t row = (bits * width + 31) / 32 * 4;
  if (offset > size || row * height > size - offset)
    invalid_input("{}: truncated BMP image: {}x{} at {} bits needs {} bytes of pixels from byte {}, the file has {}", path, width,
                  height, bits, row * height, offset, size);
}

// TGA (no magic: stb_image tries it last; a file whose second and third bytes are a valid colour
// map type and image type): stb_image reads zeros past the end, so a 31-byte file declaring
// 196 x 48901 pixels decoded. The pixels start after the 18-byte header, the image ID and the colour
// map; uncompressed they take width x height x bytes per pixel, run-length encoded at least one byte
// per 128 pixels.
void check_tga(const unsigned char* bytes, size_t size, const std::string& path) {
  if (size < 18) return;
  const unsigned map_type = bytes[1], type = bytes[2];
  const bool raw = type == 1 || type == 2 || type == 3, rle = type == 9 || type == 10 || type == 11;
  if (map_type > 1 || !(raw || rle)) return;
  auto le16 = [&](size_t at) -> uint64_t { return bytes[at] | bytes[at + 1] << 8; };
  const uint64_t map_bytes = map_type ? le16(5) * ((bytes[7] + 7) / 8) : 0;
  const uint64_t start = 18 + bytes[0] + map_bytes, pixels = le16(12) * le16(14);
  const uint64_t needed = raw ? pixels * ((bytes[16] + 7) / 8) : (pixels + 127) / 128;
  if (start > size || needed > size - start)
    invalid_input("{}: truncated TGA image: {}x{} needs at least {} bytes of pixels from byte {}, the file has {}", path,
                  le16(12), le16(14), needed, start, size);
}

// JPEG Huffman tables (DHT segments) hold 16 code counts and then that many symbols; a decoder
// has room for 256. The stb_image in Debian 12 does not check the sum and writes past its tables
// (heap corruption from a 200-byte file), so every DHT a decoder would read is checked here first:
// segments are followed by their lengths, entropy-coded data (after SOS) is scanned for markers.
void check_jpeg_huffman_tables(const unsigned char* bytes, size_t size, const std::string& path) {
  // The start-of-image marker, after any number of 0xFF fill bytes (stb_image accepts those too).
  size_t at = 0;
  while (at < size && bytes[at] == 0xFF) ++at;
  if (at == 0 || at >= size || bytes[at] != 0xD8) return;
  ++at;
  auto byte = [&](size_t i) -> unsigned { return i < size ? bytes[i] : 0; };  // stb reads 0 past the end
  while (at + 1 < size) {
    if (bytes[at] != 0xFF || bytes[at + 1] == 0xFF) {  // entropy-coded data, junk or fill bytes
      ++at;
      continue;
    }
    const unsigned marker = bytes[at + 1];
    if (marker == 0x00 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD9)) {  // no length follows
      at += 2;
      continue;
    }
    const size_t length = byte(at + 2) << 8 | byte(at + 3);
    if (marker == 0xC4) {
      // As stb_image reads it: tables until the declared length is used up.
      int64_t left = static_cast<int64_t>(length) - 2;
      size_t table = at + 4;
      while (left > 0) {
        unsigned codes = 0;
        for (size_t i = 1; i <= 16; ++i) codes += byte(table + i);
        if (codes > 256)
          invalid_input("{}: corrupt JPEG: a Huffman table at byte {} declares {} codes, more than 256", path, table, codes);
        table += 17 + codes;
        left -= 17 + codes;
      }
    }
    at += 2 + length;
  }
}

}  // namespace

std::vector<float> resize_bilinear(const std::vector<float>& pixels, int height, int width, int channels,
                                   int out_height, int out_width) {
  // Separable: rows first (width), then columns (height).
  const Taps horizontal = compute_taps(width, out_width);
  std::vector<float> wide(static_cast<size_t>(height) * out_width * channels, 0.0f);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < out_width; ++x) {
      const float* w = &horizontal.weights[static_cast<size_t>(x) * horizontal.stride];
      float* out = &wide[(static_cast<size_t>(y) * out_width + x) * channels];
      for (int k = 0; k < horizontal.count[x]; ++k) {
        const float* in = &pixels[(static_cast<size_t>(y) * width + horizontal.first[x] + k) * channels];
        for (int c = 0; c < channels; ++c) out[c] += w[k] * in[c];
      }
    }
  const Taps vertical = compute_taps(height, out_height);
  std::vector<float> result(static_cast<size_t>(out_height) * out_width * channels, 0.0f);
  const size_t row = static_cast<size_t>(out_width) * channels;
  for (int y = 0; y < out_height; ++y) {
    const float* w = &vertical.weights[static_cast<size_t>(y) * vertical.stride];
    float* out = &result[y * row];
    for (int k = 0; k < vertical.count[y]; ++k) {
      const float* in = &wide[(vertical.first[y] + k) * row];
      for (size_t i = 0; i < row; ++i) out[i] += w[k] * in[i];
    }
  }
  return result;
}

HostArray load_image(const std::string& path, const ImagePreprocess& options) {
  if (options.channels != 1 && options.channels != 3)
    invalid_input("{}: the model input needs {} channels; images give 1 (grayscale) or 3 (RGB)", path, options.channels);
  for (const auto* values : {&options.mean, &options.std})
    if (!values->empty() && values->size() != 1 && values->size() != static_cast<size_t>(options.channels))
      invalid_input("{}: --mean/--std need 1 or {} values, got {}", path, options.channels, values->size());
  for (float s : options.std)
    if (s == 0 || !std::isfinite(s)) invalid_input("{}: --std values must be finite and non-zero", path);
  if (options.height < 0 || options.width < 0 || options.height > 65536 || options.width > 65536 ||
      (options.height == 0) != (options.width == 0))
    invalid_input("{}: image size {}x{} is not valid", path, options.height, options.width);

  const InputBytes input = read_input(path);
  if (input.size > static_cast<size_t>(INT_MAX)) invalid_input("{}: image file is too large", path);
  const auto* bytes = reinterpret_cast<const stbi_uc*>(input.data);
  const int length = static_cast<int>(input.size);
  // Before stb_image sees the bytes at all: its header parsing (stbi_info) already reads the tables.
  check_pnm(bytes, input.size, path);
  check_bmp(bytes, input.size, path);
  check_tga(bytes, input.size, path);
  check_jpeg_huffman_tables(bytes, input.size, path);
  int width = 0, height = 0, file_channels = 0;
  if (!stbi_info_from_memory(bytes, length, &width, &height, &file_channels))
    invalid_input("{}: cannot decode image: {}", path, stbi_failure_reason());
  if (width <= 0 || height <= 0 || static_cast<int64_t>(width) * height > kMaxPixels)
    invalid_input("{}: image dimensions {}x{} are not supported", path, width, height);
  std::unique_ptr<stbi_uc, void (*)(void*)> decoded(
      stbi_load_from_memory(bytes, length, &width, &height, &file_channels, options.channels), stbi_image_free);
  if (!decoded) invalid_input("{}: cannot decode image: {}", path, stbi_failure_reason());

  const int channels = options.channels;
  std::vector<float> pixels(static_cast<size_t>(width) * height * channels);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = decoded.get()[i] / 255.0f;
  decoded.reset();

  int out_height = height, out_width = width;
  if (options.height > 0) {
    out_height = options.height;
    out_width = options.width;
    if (out_height != height || out_width != width) pixels = resize_bilinear(pixels, height, width, channels, out_height, out_width);
  }

  auto channel_value = [](const std::vector<float>& values, int c, float fallback) {
    if (values.empty()) return fallback;
    return values.size() == 1 ? values[0] : values[c];
  };
  HostArray array;
  array.dtype = DType::f32;
  array.shape = options.nhwc ? Shape{1, out_height, out_width, channels} : Shape{1, channels, out_height, out_width};
  array.data = ConstData::allocate(pixels.size() * sizeof(float));
  float* out = reinterpret_cast<float*>(array.data.mutable_data());
  const size_t plane = static_cast<size_t>(out_height) * out_width;
  for (size_t p = 0; p < plane; ++p)
    for (int c = 0; c < channels; ++c) {
      const float value = (pixels[p * channels + c] - channel_value(options.mean, c, 0.0f)) / channel_value(options.std, c, 1.0f);
      out[options.nhwc ? p * channels + c : c * plane + p] = value;
    }
  return array;
}

}  // namespace mt
