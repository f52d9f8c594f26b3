// Window geometry of 2-D convolution and pooling: the strides/pads/dilations read and checked
// from a node, and the output-size rules (floor, pooling's ceil_mode, transposed convolution).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "lib/ir/graph.h"

namespace mt {

// Per spatial axis: index 0 is H, index 1 is W.
struct Window2d {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> dilation{1, 1};
  std::array<int64_t, 2> pad_begin{0, 0};       // top, left
  std::array<int64_t, 2> pad_end{0, 0};         // bottom, right
  std::array<int64_t, 2> output_padding{0, 0};  // conv_transpose2d only
  bool ceil_mode = false;                       // pools only

  // Span of one window in input positions, d * (k - 1) + 1.
  int64_t extent(int axis) const { return dilation[axis] * (kernel[axis] - 1) + 1; }
};

// The window of a conv2d or conv_transpose2d node whose weight has shape `weight` (kH, kW last).
// The window of a max_pool2d or avg_pool2d node (kernel from kernel_shape). Both throw
// Error(invalid_input), with a message that does not name the node, if a list has the wrong
// length or a value is out of range: kernel, strides and dilations >= 1, pads >= 0 (pools: pads
// smaller than the window, so no window lies wholly in padding), output_padding >= 0 and
// smaller than the stride or the dilation; every value at most kMaxElements.
Window2d conv_window(const Node& node, const Shape& weight);
Window2d pool_window(const Node& node);

// Output length along `axis` for an input of length `in`: floor((in + pads - extent) / stride) + 1,
// or with ceil_mode the ceiling, less one if the last window would start in the end padding.
// 0 when the padded input is shorter than the window; nullopt if it overflows int64.
std::optional<int64_t> window_output_length(const Window2d& window, int axis, int64_t in);

// Taps of an average-pooling window (no dilation: avg_pool2d has none) along `axis` whose first
// tap is at input position `start` (o * stride - pad_begin) on an input of length `size`: `valid`
// on the input [0, size), `padded` on the padded input [-pad_begin, size + pad_end). Their product
// over both axes is the divisor (`padded` with count_include_pad); a ceil_mode window may reach
// past the end padding and those taps never count, as in PyTorch. Every backend divides by this.
struct WindowTaps {
  int64_t valid = 0;
  int64_t padded = 0;
};
WindowTaps window_taps(const Window2d& window, int axis, int64_t start, int64_t size);

// Output length of a transposed convolution:
// (in - 1) * stride - pads + extent + output_padding; may be <= 0, nullopt on overflow.
std::optional<int64_t> transposed_output_length(const Window2d& window, int axis, int64_t in);

}  // namespace mt
