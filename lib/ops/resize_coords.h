// ONNX Resize math along one axis: the coordinate transforms, nearest rounding and the taps and
// weights of nearest/linear/cubic interpolation, shared by shape inference and every backend.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "lib/ir/graph.h"

namespace mt {

enum class ResizeMode { nearest, linear, cubic };
enum class CoordinateMode { half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_half_pixel_for_nn };
enum class NearestMode { round_prefer_floor, round_prefer_ceil, floor, ceil };

struct ResizeParams {
  ResizeMode mode = ResizeMode::nearest;
  CoordinateMode coordinate_mode = CoordinateMode::half_pixel;
  NearestMode nearest_mode = NearestMode::round_prefer_floor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  Shape sizes;                 // the output shape
  std::vector<double> scales;  // per axis: the scales attribute, or out / in where it is empty

  // An axis is resized when its size or its scale changes; other axes are copied, as ONNX
  // Runtime does (so nearest with tf_half_pixel_for_nn never shifts the batch or channels).
  bool resizes_axis(size_t axis, int64_t in_length) const { return sizes[axis] != in_length || scales[axis] != 1.0; }
};

// Reads and checks the attributes of a resize node for an input of shape `input`: sizes the
// input's rank with every value >= 1, scales empty or one positive finite value per axis, known
// mode names, exclude_outside 0 or 1. Throws Error(invalid_input) without naming the node.
// The output shape is `sizes`; `scales`, when given, only drive the coordinate transform.
ResizeParams read_resize(const Node& node, const Shape& input);

// Input coordinate of output index `out_index` along an axis of `in_length` -> `out_length`:
//   half_pixel            (o + 0.5) / scale - 0.5
//   pytorch_half_pixel    the same, but 0 when out_length == 1
//   align_corners         o * (in_length - 1) / (out_length - 1), 0 when out_length == 1
//   asymmetric            o / scale
//   tf_half_pixel_for_nn  (o + 0.5) / scale
double source_coordinate(CoordinateMode mode, int64_t out_index, double scale, int64_t in_length, int64_t out_length);

// The input index nearest mode picks for coordinate x, clamped to [0, in_length - 1]. Ties
// (x exactly halfway) go down for round_prefer_floor and up for round_prefer_ceil.
int64_t nearest_index(NearestMode mode, double x, int64_t in_length);

// Weights of the cubic convolution taps floor(x) - 1 .. floor(x) + 2 for t = x - floor(x).
std::array<double, 4> cubic_coefficients(double t, double a);

// What one output element along one axis reads: up to 4 input indices (clamped to the axis)
// with weights (nearest: 1 tap, linear: 2, cubic: 4; cubic with exclude_outside drops taps
// outside the axis and renormalises the rest).
struct ResizeTaps {
  int count = 0;
  std::array<int64_t, 4> index{};
  std::array<double, 4> weight{};
};
ResizeTaps resize_taps(const ResizeParams& params, size_t axis, int64_t in_length, int64_t out_index);

}  // namespace mt
