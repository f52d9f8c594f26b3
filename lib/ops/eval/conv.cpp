// Reference kernels of the conv family: direct loops over NCHW float32 tensors, accumulating
// in double, written to mirror the definitions rather than to be fast.
#include <vector>

#include "lib/ops/conv_geometry.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

void check_float32(const Node& node, std::span<const ConstView> in) {
  for (const ConstView& view : in)
    if (view.info != nullptr) require_dtype(node, *view.info, DType::f32);
}

// y[n][m][oh][ow] = B[m] + sum over the group's channels c and taps (kh, kw) of
//   x[n][c][oh * stride - pad_top + kh * dilation][...] * W[m][c - first channel of the group][kh][kw]
// where taps that fall in the padding contribute nothing.
void conv2d(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  check_float32(node, in);
  const Shape& xs = in[0].info->shape;
  const Shape& ws = in[1].info->shape;
  const Shape& ys = out[0].info->shape;
  const Window2d window = conv_window(node, ws);
  const int64_t group = attr_int(node, "group");
  const ActivationBounds bounds = activation_bounds(node);
  const int64_t batch = xs[0], channels = xs[1], height = xs[2], width = xs[3];
  const int64_t out_channels = ys[1], out_height = ys[2], out_width = ys[3];
  const int64_t group_in = channels / group, group_out = out_channels / group;
  const float* x = in[0].as<float>();
  const float* w = in[1].as<float>();
  const float* bias = in.size() > 2 && in[2].info != nullptr ? in[2].as<float>() : nullptr;
  float* y = out[0].as<float>();

  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < out_channels; ++m) {
      const int64_t first_channel = m / group_out * group_in;
      for (int64_t oh = 0; oh < out_height; ++oh)
        for (int64_t ow = 0; ow < out_width; ++ow) {
          double sum = bias != nullptr ? bias[m] : 0.0;
          for (int64_t c = 0; c < group_in; ++c)
            for (int64_t kh = 0; kh < ws[2]; ++kh) {
              const int64_t ih = oh * window.stride[0] - window.pad_begin[0] + kh * window.dilation[0];
              if (ih < 0 || ih >= height) continue;
              for (int64_t kw = 0; kw < ws[3]; ++kw) {
                const int64_t iw = ow * window.stride[1] - window.pad_begin[1] + kw * window.dilation[1];
                if (iw < 0 || iw >= width) continue;
                const double xv = x[((n * channels + first_channel + c) * height + ih) * width + iw];
                const double wv = w[((m * group_in + c) * ws[2] + kh) * ws[3] + kw];
                sum += xv * wv;
              }
            }
          y[((n * out_channels + m) * out_height + oh) * out_width + ow] = static_cast<float>(bounds.apply(sum));
        }
    }
}

// The transpose of conv2d: every input element x[n][c][ih][iw] adds x * W[c][j][kh][kw] to
// y[n][first output channel of c's group + j][ih * stride - pad_top + kh * dilation][...],
// dropping what lands outside the output.
void conv_transpose2d(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  check_float32(node, in);
  const Shape& xs = in[0].info->shape;
  const Shape& ws = in[1].info->shape;
  const Shape& ys = out[0].info->shape;
  const Window2d window = conv_window(node, ws);
  const int64_t group = attr_int(node, "group");
  const ActivationBounds bounds = activation_bounds(node);
  const int64_t batch = xs[0], channels = xs[1], height = xs[2], width = xs[3];
  const int64_t out_channels = ys[1], out_height = ys[2], out_width = ys[3];
  const int64_t group_in = channels / group, group_out = ws[1];
  const float* x = in[0].as<float>();
  const float* w = in[1].as<float>();
  const float* bias = in.size() > 2 && in[2].info != nullptr ? in[2].as<float>() : nullptr;

  std::vector<double> sums(static_cast<size_t>(out[0].info->numel()), 0.0);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t first_out = c / group_in * group_out;
      for (int64_t ih = 0; ih < height; ++ih)
        for (int64_t iw = 0; iw < width; ++iw) {
          const double xv = x[((n * channels + c) * height + ih) * width + iw];
          for (int64_t j = 0; j < group_out; ++j)
            for (int64_t kh = 0; kh < ws[2]; ++kh) {
              const int64_t oh = ih * window.stride[0] - window.pad_begin[0] + kh * window.dilation[0];
              if (oh < 0 || oh >= out_height) continue;
              for (int64_t kw = 0; kw < ws[3]; ++kw) {
                const int64_t ow = iw * window.stride[1] - window.pad_begin[1] + kw * window.dilation[1];
                if (ow < 0 || ow >= out_width) continue;
                const double wv = w[((c * group_out + j) * ws[2] + kh) * ws[3] + kw];
                sums[((n * out_channels + first_out + j) * out_height + oh) * out_width + ow] += xv * wv;
              }
            }
        }
    }
  float* y = out[0].as<float>();
  const int64_t plane = out_height * out_width;
  for (size_t i = 0; i < sums.size(); ++i) {
    const int64_t m = static_cast<int64_t>(i) / plane % out_channels;
    y[i] = static_cast<float>(bounds.apply(sums[i] + (bias != nullptr ? bias[m] : 0.0)));
  }
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table.add("conv2d", conv2d);
  table.add("conv_transpose2d", conv_transpose2d);
}

}  // namespace mt::reference
