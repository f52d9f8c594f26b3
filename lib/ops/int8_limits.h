// The scale ratios the cpu backend's int8 operators (XNNPACK's qs8/qc8, fp32 requantization)
// accept, in one place: the cpu checks refuse nodes outside them and mt-quantize chooses
// parameters inside them.
#pragma once

namespace mt::int8_limits {

// A half-open interval [min, max) of scale ratios.
struct RatioRange {
  double min;
  double max;
  constexpr bool contains(double ratio) const { return ratio >= min && ratio < max; }
};

// conv2d / linear: x_scale * w_scale[c] / y_scale, per output channel.
inline constexpr RatioRange kRequantization{0x1.0p-32, 256.0};
// add: a_scale / y_scale and b_scale / y_scale.
inline constexpr RatioRange kAddInput{0x1.0p-10, 256.0};
// mul: a_scale * b_scale / y_scale.
inline constexpr RatioRange kMulProduct{0x1.0p-16, 256.0};
// global_avg_pool: x_scale / y_scale.
inline constexpr RatioRange kGlobalAvgPool{0x1.0p-8, 256.0};

}  // namespace mt::int8_limits
