// Helpers shared by the reference kernels: dtype checks that throw Error(unsupported) naming
// the node, the fused act_min/act_max clamp, and a row-major walk over a broadcast output.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "lib/core/error.h"
#include "lib/ir/graph.h"
#include "lib/ops/registry.h"

namespace mt::reference {

// Throws Error(unsupported) unless `tensor` has dtype `expected`.
inline void require_dtype(const Node& node, const TensorInfo& tensor, DType expected) {
  if (tensor.dtype != expected)
    unsupported("node '{}' ({}): the reference kernel supports {} only, tensor '{}' is {}", node.name, node.op,
                dtype_name(expected), tensor.name, dtype_name(tensor.dtype));
}

// The parameters of an int8 tensor quantized per tensor (activations): real = scale (q - zero_point).
struct TensorQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool operator==(const TensorQuant&) const = default;
};

// `info`'s per-tensor parameters; Error(unsupported) naming the node unless it is int8 quantized
// per tensor.
inline TensorQuant per_tensor_quant(const Node& node, const TensorInfo& info) {
  require_dtype(node, info, DType::i8);
  if (!info.quant || info.quant->axis >= 0 || info.quant->scales.size() != 1 || info.quant->zero_points.size() != 1)
    unsupported("node '{}' ({}): int8 tensor '{}' needs per-tensor quantization parameters", node.name, node.op,
                info.name);
  return {info.quant->scales[0], info.quant->zero_points[0]};
}

// The clamp that mt-fuse folds into a producer (attributes act_min, act_max). A bound at or
// beyond +-FLT_MAX (the defaults) means none, so an infinite result stays infinite; NaN stays NaN.
struct ActivationBounds {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();

  bool active() const { return lo > -std::numeric_limits<double>::infinity() || hi < std::numeric_limits<double>::infinity(); }
  double apply(double y) const { return std::isnan(y) ? y : std::min(std::max(y, lo), hi); }
};

inline ActivationBounds activation_bounds(const Node& node) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  const double lo = attr_float(node, "act_min");
  const double hi = attr_float(node, "act_max");
  ActivationBounds bounds;
  if (lo > -kFloatMax) bounds.lo = lo;
  if (hi < kFloatMax) bounds.hi = hi;
  return bounds;
}

// Calls fn(out_offset, offsets) for every element of `out` in row-major order, where offsets[i]
// is the element of input i, whose row-major strides as seen from `out` are strides[i]
// (0 along broadcast dimensions; see broadcast_strides()).
template <size_t N, typename Fn>
void for_each_broadcast(const Shape& out, const std::array<std::vector<int64_t>, N>& strides, Fn&& fn) {
  const int64_t count = numel(out);
  if (count == 0) return;
  const size_t rank = out.size();
  std::vector<int64_t> index(rank, 0);
  std::array<int64_t, N> offsets{};
  for (int64_t o = 0; o < count; ++o) {
    fn(o, offsets);
    // Advance the multi-index like an odometer, keeping the input offsets in step.
    for (size_t d = rank; d-- > 0;) {
      ++index[d];
      for (size_t i = 0; i < N; ++i) offsets[i] += strides[i][d];
      if (index[d] < out[d]) break;
      for (size_t i = 0; i < N; ++i) offsets[i] -= strides[i][d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace mt::reference
