// Loops along one axis of a row-major tensor seen as [outer, n, inner]: argmax/argmin, hardmax,
// cumsum, top_k and local response normalization (along the channels). The reference kernels and the cpu backend both run these, so they agree exactly;
// a backend splits the work by calling them on a range of outer rows (pointers advanced by
// `first` rows, see AxisView::offset).
#pragma once

#include <cstddef>
#include <cstdint>

#include "lib/ir/shape.h"

namespace mt {

// A tensor viewed along `axis`: outer rows of n elements, each element followed by inner ones.
struct AxisView {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
  // The element offset of outer row `row`.
  int64_t offset(int64_t row) const { return row * n * inner; }
};

// The view of `shape` along `axis` (already normalised to [0, rank)).
AxisView axis_view(const Shape& shape, size_t axis);

// For each (outer, inner) position, the index along the axis of the largest (max = true) or
// smallest element into out[outer * inner + inner]; ties take the first index, or the last
// with `last`. A NaN counts as larger than everything for max and smaller for min (the first NaN
// wins, as numpy.argmax), so a row with NaN points at it.
void arg_extreme(const float* x, int64_t* out, const AxisView& view, int64_t rows, bool max, bool last);

// 1 at the first maximum along the axis, 0 elsewhere (ONNX Hardmax).
void hardmax(const float* x, float* y, const AxisView& view, int64_t rows);

// Running sums along the axis (ONNX CumSum): `exclusive` leaves the element itself out (the
// first sum is 0), `reverse` sums from the end. T is float, int32_t or int64_t.
template <typename T>
void cumsum(const T* x, T* y, const AxisView& view, int64_t rows, bool exclusive, bool reverse);

// The k largest (or smallest) elements along the axis, in order (largest first, or smallest
// first), with their int64 indices; equal values keep the lower index first, and NaN counts as
// larger than every number (as in numpy's sort). values and indices are views with n = k.
void top_k(const float* x, float* values, int64_t* indices, const AxisView& view, int64_t rows, int64_t k,
           bool largest);

// Local response normalization across the axis (ONNX LRN, channels at axis 1): y = x / (bias +
// alpha / size * sum of x^2 over the window [c - (size - 1) / 2, c + size / 2]) ^ beta.
struct LrnParams {
  int64_t size = 1;
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
};
void lrn(const float* x, float* y, const AxisView& view, int64_t rows, const LrnParams& params);

}  // namespace mt
