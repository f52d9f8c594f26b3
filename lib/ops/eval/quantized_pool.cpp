// Reference int8 avg_pool2d: y = requantize(sum of (x - x_zero) over the window's taps on the
// input, x_scale / (count * y_scale)), count as the float kernel counts (the taps on the input,
// or with count_include_pad the taps on the padded input: padding is real zero, x_zero, and adds
// nothing to the sum). The multiplier is formed in float32 exactly so, as the cpu kernel forms it.
#include "lib/ops/conv_geometry.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/int8_arithmetic.h"

namespace mt::reference {
namespace {

void avg_pool2d(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const auto [x_scale, x_zero] = per_tensor_quant(node, *in[0].info);
  const auto [y_scale, y_zero] = per_tensor_quant(node, *out[0].info);
  const Shape& xs = in[0].info->shape;
  const Shape& ys = out[0].info->shape;
  const Window2d window = pool_window(node);
  const bool include_pad = attr_int(node, "count_include_pad") == 1;
  const int8_t* x = in[0].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  const int64_t planes = xs[0] * xs[1], height = xs[2], width = xs[3];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < ys[2]; ++oh) {
      const int64_t top = oh * window.stride[0] - window.pad_begin[0];
      const WindowTaps rows = window_taps(window, 0, top, height);
      for (int64_t ow = 0; ow < ys[3]; ++ow) {
        const int64_t left = ow * window.stride[1] - window.pad_begin[1];
        const WindowTaps columns = window_taps(window, 1, left, width);
        int32_t acc = 0;
        for (int64_t ih = std::max<int64_t>(top, 0); ih < std::min(top + window.kernel[0], height); ++ih)
          for (int64_t iw = std::max<int64_t>(left, 0); iw < std::min(left + window.kernel[1], width); ++iw)
            acc += x[(p * height + ih) * width + iw] - x_zero;
        const int64_t count = include_pad ? rows.padded * columns.padded : rows.valid * columns.valid;
        const float multiplier = x_scale / (static_cast<float>(count) * y_scale);
        y[(p * ys[2] + oh) * ys[3] + ow] = requantize(acc, multiplier, y_zero, -128, 127);
      }
    }
}

}  // namespace

void register_quantized_pool_kernels(KernelTable& table) { table.add_int8("avg_pool2d", avg_pool2d); }

}  // namespace mt::reference
