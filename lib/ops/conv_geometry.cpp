#include "lib/ops/conv_geometry.h"

#include <algorithm>
#include <string_view>

#include "lib/ops/registry.h"

namespace mt {
namespace {

// Reads an ints attribute of exactly `count` values, each in [min, kMaxElements].
std::vector<int64_t> bounded_ints(const Node& node, std::string_view attr, size_t count, int64_t min) {
  const auto& values = attr_ints(node, attr);
  if (values.size() != count) invalid_input("attribute '{}' must have {} values, got {}", attr, count, values.size());
  for (int64_t value : values)
    if (value < min || value > kMaxElements)
      invalid_input("attribute '{}' = [{}] must hold values in [{}, 2^40]", attr, fmt::join(values, ","), min);
  return values;
}

bool has_attr(const Node& node, std::string_view attr) { return get_op(node).find_attr(attr) != nullptr; }

// strides, pads, dilations, output_padding and ceil_mode, as far as the op has them.
Window2d read_common(const Node& node, std::array<int64_t, 2> kernel) {
  Window2d window;
  window.kernel = kernel;
  const auto strides = bounded_ints(node, "strides", 2, 1);
  const auto pads = bounded_ints(node, "pads", 4, 0);
  window.stride = {strides[0], strides[1]};
  window.pad_begin = {pads[0], pads[1]};
  window.pad_end = {pads[2], pads[3]};
  if (has_attr(node, "dilations")) {
    const auto dilations = bounded_ints(node, "dilations", 2, 1);
    window.dilation = {dilations[0], dilations[1]};
  }
  for (int axis = 0; axis < 2; ++axis)
    if (window.kernel[axis] - 1 > kMaxElements / window.dilation[axis])
      invalid_input("dilated kernel extent along {} is too large", axis == 0 ? "H" : "W");
  return window;
}

}  // namespace

Window2d conv_window(const Node& node, const Shape& weight) {
  if (weight.size() != 4) invalid_input("weight must have rank 4, got shape {}", shape_str(weight));
  if (weight[2] < 1 || weight[3] < 1) invalid_input("weight {} has an empty kernel", shape_str(weight));
  Window2d window = read_common(node, {weight[2], weight[3]});
  if (has_attr(node, "output_padding")) {
    const auto output_padding = bounded_ints(node, "output_padding", 2, 0);
    for (int axis = 0; axis < 2; ++axis)
      if (output_padding[axis] >= std::max(window.stride[axis], window.dilation[axis]))
        invalid_input("output_padding [{}] must be smaller than the stride or the dilation",
                      fmt::join(output_padding, ","));
    window.output_padding = {output_padding[0], output_padding[1]};
  }
  return window;
}

Window2d pool_window(const Node& node) {
  const auto kernel = bounded_ints(node, "kernel_shape", 2, 1);
  Window2d window = read_common(node, {kernel[0], kernel[1]});
  const int64_t ceil_mode = attr_int(node, "ceil_mode");
  if (ceil_mode != 0 && ceil_mode != 1) invalid_input("attribute 'ceil_mode' must be 0 or 1, got {}", ceil_mode);
  window.ceil_mode = ceil_mode == 1;
  for (int axis = 0; axis < 2; ++axis)
    if (window.pad_begin[axis] >= window.extent(axis) || window.pad_end[axis] >= window.extent(axis))
      invalid_input("pads [{}] must be smaller than the window ({}x{})", fmt::join(attr_ints(node, "pads"), ","),
                    window.extent(0), window.extent(1));
  return window;
}

std::optional<int64_t> window_output_length(const Window2d& window, int axis, int64_t in) {
  // Every term is at most 2^40 (checked when the window was read), so sums cannot overflow.
  const int64_t padded = in + window.pad_begin[axis] + window.pad_end[axis];
  const int64_t extent = window.extent(axis);
  const int64_t stride = window.stride[axis];
  if (padded < extent) return 0;
  if (!window.ceil_mode) return (padded - extent) / stride + 1;
  int64_t out = (padded - extent + stride - 1) / stride + 1;
  // The last window must start inside the input or the begin padding (PyTorch and ONNX agree).
  if ((out - 1) * stride >= in + window.pad_begin[axis]) --out;
  return out;
}

std::optional<int64_t> transposed_output_length(const Window2d& window, int axis, int64_t in) {
  if (in == 0) return 0;
  int64_t spread = 0;
  int64_t out = 0;
  if (__builtin_mul_overflow(in - 1, window.stride[axis], &spread) ||
      __builtin_add_overflow(spread, window.extent(axis) + window.output_padding[axis], &out))
    return std::nullopt;
  return out - window.pad_begin[axis] - window.pad_end[axis];
}

WindowTaps window_taps(const Window2d& window, int axis, int64_t start, int64_t size) {
  // The window covers [start, start + kernel); each count is its overlap with an interval.
  const int64_t end = start + window.kernel[axis];
  auto overlap = [&](int64_t lo, int64_t hi) { return std::max<int64_t>(0, std::min(end, hi) - std::max(start, lo)); };
  return {overlap(0, size), overlap(-window.pad_begin[axis], size + window.pad_end[axis])};
}

}  // namespace mt
