// Reference int8 kernels (the oracle of the quantized backends): quantize, dequantize and the
// int8 variants of conv2d, linear, add, max_pool2d and global_avg_pool, with per-tensor
// asymmetric activations, per-output-channel symmetric weights (axis 0) and int32 bias whose
// scale is x_scale * w_scale[c]. Accumulation is exact int32; requantization is quantized.h's.
#include "lib/ops/int8_arithmetic.h"

#include <array>
#include <vector>

#include "lib/ops/broadcast.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

// Per-output-channel weight scales (axis 0, zero point 0), one per channel.
std::vector<float> weight_scales(const Node& node, const TensorInfo& info) {
  require_dtype(node, info, DType::i8);
  const auto& q = info.quant;
  const size_t channels = static_cast<size_t>(info.shape.at(0));
  const bool per_channel = q && q->axis == 0 && q->scales.size() == channels;
  const bool per_tensor = q && q->axis < 0 && q->scales.size() == 1;
  if (!per_channel && !per_tensor)
    unsupported("node '{}' ({}): int8 weight '{}' needs per-channel (axis 0) or per-tensor parameters", node.name,
                node.op, info.name);
  for (int32_t zero : q->zero_points)
    if (zero != 0) unsupported("node '{}' ({}): int8 weight '{}' must be symmetric (zero point 0)", node.name, node.op, info.name);
  return per_channel ? q->scales : std::vector<float>(channels, q->scales[0]);
}

const int32_t* int32_bias(const Node& node, std::span<const ConstView> in) {
  if (in.size() < 3 || in[2].info == nullptr) return nullptr;
  require_dtype(node, *in[2].info, DType::i32);
  return in[2].as<int32_t>();
}

// The fused act_min/act_max clamp in output int8 values.
std::pair<int32_t, int32_t> int8_bounds(const Node& node, TensorQuant y) {
  return int8_clamp_bounds(attr_float(node, "act_min"), attr_float(node, "act_max"), y.scale, y.zero_point);
}

void quantize(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  require_dtype(node, *in[0].info, DType::f32);
  const TensorQuant q = per_tensor_quant(node, *out[0].info);
  const float* x = in[0].as<float>();
  int8_t* y = out[0].as<int8_t>();
  for (int64_t i = 0, n = out[0].info->numel(); i < n; ++i) y[i] = quantize_value(x[i], q.scale, q.zero_point);
}

void dequantize(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant q = per_tensor_quant(node, *in[0].info);
  const int8_t* x = in[0].as<int8_t>();
  float* y = out[0].as<float>();
  for (int64_t i = 0, n = out[0].info->numel(); i < n; ++i) y[i] = dequantize_value(x[i], q.scale, q.zero_point);
}

void conv2d(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant xq = per_tensor_quant(node, *in[0].info);
  const TensorQuant yq = per_tensor_quant(node, *out[0].info);
  const std::vector<float> wscale = weight_scales(node, *in[1].info);
  const int32_t* bias = int32_bias(node, in);
  const auto [lo, hi] = int8_bounds(node, yq);
  const Shape& xs = in[0].info->shape;
  const Shape& ws = in[1].info->shape;
  const Shape& ys = out[0].info->shape;
  const Window2d window = conv_window(node, ws);
  const int64_t group = attr_int(node, "group");
  const int64_t batch = xs[0], channels = xs[1], height = xs[2], width = xs[3];
  const int64_t out_channels = ys[1], out_height = ys[2], out_width = ys[3];
  const int64_t group_in = channels / group, group_out = out_channels / group;
  const int8_t* x = in[0].as<int8_t>();
  const int8_t* w = in[1].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t first_channel = m / group_out * group_in;
      const float multiplier = xq.scale * wscale[m] / yq.scale;
      for (int64_t oh = 0; oh < out_height; ++oh)
        for (int64_t ow = 0; ow < out_width; ++ow) {
          // Padding holds the input zero point, i.e. real zero, so it contributes nothing.
          int32_t acc = bias != nullptr ? bias[m] : 0;
          for (int64_t c = 0; c < group_in; ++c)
            for (int64_t kh = 0; kh < ws[2]; ++kh) {
              const int64_t ih = oh * window.stride[0] - window.pad_begin[0] + kh * window.dilation[0];
              if (ih < 0 || ih >= height) continue;
              for (int64_t kw = 0; kw < ws[3]; ++kw) {
                const int64_t iw = ow * window.stride[1] - window.pad_begin[1] + kw * window.dilation[1];
                if (iw < 0 || iw >= width) continue;
                const int32_t xv = x[((n * channels + first_channel + c) * height + ih) * width + iw] - xq.zero_point;
                acc += xv * w[((m * group_in + c) * ws[2] + kh) * ws[3] + kw];
              }
            }
          y[((n * out_channels + m) * out_height + oh) * out_width + ow] =
              requantize(acc, multiplier, yq.zero_point, lo, hi);
        }
    }
}

void linear(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant xq = per_tensor_quant(node, *in[0].info);
  const TensorQuant yq = per_tensor_quant(node, *out[0].info);
  const std::vector<float> wscale = weight_scales(node, *in[1].info);
  const int32_t* bias = int32_bias(node, in);
  const auto [lo, hi] = int8_bounds(node, yq);
  const int64_t k = in[1].info->shape[1], n_out = in[1].info->shape[0];
  const int64_t rows = in[0].info->numel() / k;
  const int8_t* x = in[0].as<int8_t>();
  const int8_t* w = in[1].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n_out; ++j) {
      int32_t acc = bias != nullptr ? bias[j] : 0;
      for (int64_t i = 0; i < k; ++i) acc += (x[r * k + i] - xq.zero_point) * w[j * k + i];
      y[r * n_out + j] = requantize(acc, xq.scale * wscale[j] / yq.scale, yq.zero_point, lo, hi);
    }
}

// y = round_half_even((sa (a - za) + sb (b - zb)) / sy) + zy, computed in float32, then the fused clamp.
void add(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant aq = per_tensor_quant(node, *in[0].info);
  const TensorQuant bq = per_tensor_quant(node, *in[1].info);
  const TensorQuant yq = per_tensor_quant(node, *out[0].info);
  const auto [lo, hi] = int8_bounds(node, yq);
  const Shape& ys = out[0].info->shape;
  const std::array<std::vector<int64_t>, 2> strides{broadcast_strides(in[0].info->shape, ys),
                                                    broadcast_strides(in[1].info->shape, ys)};
  const int8_t* a = in[0].as<int8_t>();
  const int8_t* b = in[1].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  const float a_multiplier = aq.scale / yq.scale, b_multiplier = bq.scale / yq.scale;
  // Bounds in the zero-point-relative domain (plain floats: clang 14 cannot capture structured bindings).
  const float v_lo = static_cast<float>(lo - yq.zero_point), v_hi = static_cast<float>(hi - yq.zero_point);
  for_each_broadcast(ys, strides, [&](int64_t o, const std::array<int64_t, 2>& offsets) {
    float v = a_multiplier * static_cast<float>(a[offsets[0]] - aq.zero_point) +
              b_multiplier * static_cast<float>(b[offsets[1]] - bq.zero_point);
    v = std::clamp(v, v_lo, v_hi);
    y[o] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + yq.zero_point);
  });
}

// Max pooling commutes with a monotonic requantization; with equal input and output parameters
// (what the quantize pass writes) it is a max over int8 values.
void max_pool2d(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant xq = per_tensor_quant(node, *in[0].info);
  const TensorQuant yq = per_tensor_quant(node, *out[0].info);
  const Shape& xs = in[0].info->shape;
  const Shape& ys = out[0].info->shape;
  const Window2d window = pool_window(node);
  const int8_t* x = in[0].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  const int64_t planes = xs[0] * xs[1], height = xs[2], width = xs[3];
  const float multiplier = xq.scale / yq.scale;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < ys[2]; ++oh)
      for (int64_t ow = 0; ow < ys[3]; ++ow) {
        int32_t best = -128;
        for (int64_t kh = 0; kh < window.kernel[0]; ++kh) {
          const int64_t ih = oh * window.stride[0] - window.pad_begin[0] + kh * window.dilation[0];
          if (ih < 0 || ih >= height) continue;
          for (int64_t kw = 0; kw < window.kernel[1]; ++kw) {
            const int64_t iw = ow * window.stride[1] - window.pad_begin[1] + kw * window.dilation[1];
            if (iw >= 0 && iw < width) best = std::max<int32_t>(best, x[(p * height + ih) * width + iw]);
          }
        }
        y[(p * ys[2] + oh) * ys[3] + ow] = xq == yq ? static_cast<int8_t>(best)
                                                    : requantize(best - xq.zero_point, multiplier, yq.zero_point, -128, 127);
      }
}

// y = requantize(sum(x - zx), sx / (count * sy)): XNNPACK's qs8 global average pooling.
void global_avg_pool(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant xq = per_tensor_quant(node, *in[0].info);
  const TensorQuant yq = per_tensor_quant(node, *out[0].info);
  const Shape& xs = in[0].info->shape;
  const int64_t planes = xs[0] * xs[1];
  const int64_t count = planes == 0 ? 0 : in[0].info->numel() / planes;
  const int8_t* x = in[0].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  const float multiplier = xq.scale / (static_cast<float>(count) * yq.scale);
  for (int64_t p = 0; p < planes; ++p) {
    int32_t acc = 0;
    for (int64_t i = 0; i < count; ++i) acc += x[p * count + i] - xq.zero_point;
    y[p] = requantize(acc, multiplier, yq.zero_point, -128, 127);
  }
}

}  // namespace

void register_quantized_kernels(KernelTable& table) {
  table.add("quantize", quantize);
  table.add("dequantize", dequantize);
  table.add_int8("conv2d", conv2d);
  table.add_int8("linear", linear);
  table.add_int8("add", add);
  table.add_int8("max_pool2d", max_pool2d);
  table.add_int8("global_avg_pool", global_avg_pool);
}

}  // namespace mt::reference
