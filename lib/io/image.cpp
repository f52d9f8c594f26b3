#include "lib/io/image.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "lib/core/error.h"
#include "lib/io/image_decode.h"

namespace mt {
namespace {

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
  const DecodedImage decoded = decode_image(input.bytes(), path, options.channels);
  const int width = decoded.width, height = decoded.height, channels = options.channels;
  std::vector<float> pixels(decoded.pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = decoded.pixels[i] / 255.0f;

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
