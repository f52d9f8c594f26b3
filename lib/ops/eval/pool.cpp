// Reference kernels of the pool family: direct loops over NCHW float32 tensors, sums in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/ops/conv_geometry.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/max_pool_indices.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

// max that lets NaN through, as PyTorch's pooling does.
float max_nan(float best, float value) { return value > best || std::isnan(value) ? value : best; }
uint8_t max_nan(uint8_t best, uint8_t value) { return std::max(best, value); }

// Where max_pool2d's maxima are (ONNX MaxPool's Indices): lib/ops/max_pool_indices.h.
void max_pool2d_indices_kernel(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  require_dtype(node, *in[0].info, DType::f32);
  max_pool2d_indices(pool_window(node), in[0].info->shape, out[0].info->shape, attr_int(node, "storage_order") != 0,
                     in[0].as<float>(), out[0].as<int64_t>());
}

// y[n][c][oh][ow] = max over taps (kh, kw) of x[n][c][oh * stride - pad_top + kh * dilation][...],
// taps in the padding being -inf (the type's lowest value).
template <typename T>
void max_pool2d_typed(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& xs = in[0].info->shape;
  const Shape& ys = out[0].info->shape;
  const Window2d window = pool_window(node);
  const T* x = in[0].as<T>();
  T* y = out[0].as<T>();
  const int64_t planes = xs[0] * xs[1], height = xs[2], width = xs[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < ys[2]; ++oh)
      for (int64_t ow = 0; ow < ys[3]; ++ow) {
        T best = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::lowest();
        for (int64_t kh = 0; kh < window.kernel[0]; ++kh) {
          const int64_t ih = oh * window.stride[0] - window.pad_begin[0] + kh * window.dilation[0];
          if (ih < 0 || ih >= height) continue;
          for (int64_t kw = 0; kw < window.kernel[1]; ++kw) {
            const int64_t iw = ow * window.stride[1] - window.pad_begin[1] + kw * window.dilation[1];
            if (iw >= 0 && iw < width) best = max_nan(best, x[(p * height + ih) * width + iw]);
          }
        }
        y[(p * ys[2] + oh) * ys[3] + ow] = best;
      }
}

// float32, and uint8 (images; int8 with quantization parameters runs quantized_pool.cpp).
void max_pool2d(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  if (in[0].info->dtype == DType::u8) return max_pool2d_typed<uint8_t>(node, in, out);
  require_dtype(node, *in[0].info, DType::f32);
  max_pool2d_typed<float>(node, in, out);
}

// y[n][c][oh][ow] = (sum of the taps on the input) / (number of taps on the input, or with
// count_include_pad the number of taps on the padded input).
void avg_pool2d(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  require_dtype(node, *in[0].info, DType::f32);
  const Shape& xs = in[0].info->shape;
  const Shape& ys = out[0].info->shape;
  const Window2d window = pool_window(node);
  const bool include_pad = attr_int(node, "count_include_pad") == 1;
  const float* x = in[0].as<float>();
  float* y = out[0].as<float>();
  const int64_t planes = xs[0] * xs[1], height = xs[2], width = xs[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < ys[2]; ++oh) {
      const int64_t top = oh * window.stride[0] - window.pad_begin[0];
      const WindowTaps rows = window_taps(window, 0, top, height);
      for (int64_t ow = 0; ow < ys[3]; ++ow) {
        const int64_t left = ow * window.stride[1] - window.pad_begin[1];
        const WindowTaps columns = window_taps(window, 1, left, width);
        double sum = 0;
        for (int64_t ih = std::max<int64_t>(top, 0); ih < std::min(top + window.kernel[0], height); ++ih)
          for (int64_t iw = std::max<int64_t>(left, 0); iw < std::min(left + window.kernel[1], width); ++iw)
            sum += x[(p * height + ih) * width + iw];
        const int64_t count = include_pad ? rows.padded * columns.padded : rows.valid * columns.valid;
        y[(p * ys[2] + oh) * ys[3] + ow] = static_cast<float>(sum / static_cast<double>(count));
      }
    }
}

// Global pooling: one reduction per (n, c) plane over every spatial element.
template <bool kMax>
void global_pool(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  require_dtype(node, *in[0].info, DType::f32);
  const Shape& xs = in[0].info->shape;
  const int64_t planes = xs[0] * xs[1];
  const int64_t plane_size = numel(Shape(xs.begin() + 2, xs.end()));
  const float* x = in[0].as<float>();
  float* y = out[0].as<float>();
  for (int64_t p = 0; p < planes; ++p) {
    const float* plane = x + p * plane_size;
    if constexpr (kMax) {
      float best = plane[0];
      for (int64_t i = 1; i < plane_size; ++i) best = max_nan(best, plane[i]);
      y[p] = best;
    } else {
      double sum = 0;
      for (int64_t i = 0; i < plane_size; ++i) sum += plane[i];
      y[p] = static_cast<float>(sum / static_cast<double>(plane_size));
    }
  }
}

}  // namespace

void register_pool_kernels(KernelTable& table) {
  table.add("max_pool2d", max_pool2d);
  table.add("max_pool2d_indices", max_pool2d_indices_kernel);
  table.add("avg_pool2d", avg_pool2d);
  table.add("global_avg_pool", global_pool<false>);
  table.add("global_max_pool", global_pool<true>);
}

}  // namespace mt::reference
