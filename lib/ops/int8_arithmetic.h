// The int8 arithmetic of mt's quantization scheme (docs/ARCHITECTURE.md, Quantization): quantize /
// dequantize one value and the fp32 requantization of an int32 accumulator. The reference int8
// kernels (lib/ops/eval/quantized*.cpp) run it, the cpu int8 kernels reproduce it bit for bit, and
// mt-quantize's report and the tests use it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace mt {

// q = clamp(round_half_even(x / scale) + zero_point, -128, 127). NaN becomes the zero point.
inline int8_t quantize_value(float x, float scale, int32_t zero_point) {
  float v = x / scale;
  if (std::isnan(v)) v = 0.0f;
  v = std::clamp(v, -128.0f - static_cast<float>(zero_point), 127.0f - static_cast<float>(zero_point));
  return static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + zero_point);
}

inline float dequantize_value(int8_t q, float scale, int32_t zero_point) {
  return scale * static_cast<float>(static_cast<int32_t>(q) - zero_point);
}

// XNNPACK's "fp32" requantization: the int32 accumulator times a float32 multiplier, clamped to
// [lo, hi] (int8 values) relative to the zero point, rounded half to even (std::nearbyint in the
// default rounding mode, as XNNPACK's magic-bias and lrintf variants do), plus the zero point.
inline int8_t requantize(int32_t acc, float multiplier, int32_t zero_point, int32_t lo, int32_t hi) {
  float v = static_cast<float>(acc) * multiplier;
  v = std::clamp(v, static_cast<float>(lo - zero_point), static_cast<float>(hi - zero_point));
  return static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + zero_point);
}

// The float functions of the int8 activations that quantize their input's values one by one:
// the reference int8 kernels apply them per element, the cpu ones tabulate them for the 256 int8
// inputs, so both must evaluate the same float32 expression.
inline float int8_hardswish_function(float v) { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; }
inline float int8_silu_function(float v) { return v / (1.0f + std::exp(-v)); }
// A fused clamp [act_min, act_max] (bounds at or beyond +-FLT_MAX mean none) in the int8 values of
// an output with these parameters: the quantized bounds, clamped to the int8 range, hi >= lo.
inline std::pair<int32_t, int32_t> int8_clamp_bounds(double act_min, double act_max, float scale, int32_t zero_point) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  double lo = -128, hi = 127;
  if (act_min > -kFloatMax) lo = std::clamp(std::nearbyint(act_min / scale) + zero_point, -128.0, 127.0);
  if (act_max < kFloatMax) hi = std::clamp(std::nearbyint(act_max / scale) + zero_point, -128.0, 127.0);
  return {static_cast<int32_t>(lo), static_cast<int32_t>(std::max(lo, hi))};
}

}  // namespace mt
