// The int8 scheme's parameter math: asymmetric per-tensor activation parameters from a range,
// symmetric per-output-channel weights and int32 bias (XNNPACK's qs8 / qc8 operators), kept
// inside what the kernels take (lib/ops/int8_limits.h) on trained weights' edge cases.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lib/ir/tensor.h"
#include "lib/quant/calibration.h"

namespace mt::quant {

// The smallest activation scale: a range that collapsed to one value (a constant or dead tensor)
// still gets a valid scale, and every value in it stays exact or within half a step.
inline constexpr float kMinActivationScale = 1e-8f;

// Scale and zero point covering [lo, hi] widened to include 0 (so real zero, e.g. padding, is
// exact): scale = max((hi - lo) / 255, kMinActivationScale), in double where an outlier range
// near the float limits would overflow float; zero_point = round(-128 - lo / scale)
// clamped to [-128, 127].
QuantParams activation_params(float lo, float hi);

// `range` widened so that activation_params gives a scale of at least `min_scale`: on the side(s)
// it already extends to (a ReLU output stays non-negative), or symmetrically when it is [0, 0].
Range widen_to_scale(Range range, double min_scale);

// The largest |bias| / (x_scale * w_scale) a channel's scale allows: int32 with a factor 2 to spare.
inline constexpr double kMaxBiasSteps = 0x1.0p30;

// The smallest weight scale of one output channel of a conv2d / linear whose input and output
// scales are x_scale and y_scale and whose bias is `bias`: the requantization multiplier
// x_scale * w_scale / y_scale stays at least twice the kernels' lower bound, the bias
// round(bias / (x_scale * w_scale)) fits in int32 with a factor 2 to spare, and the scale is a
// normal float. A channel whose weights are all below it (dead, denormal) quantizes to zeros.
float weight_scale_floor(float x_scale, float y_scale, float bias);

// Per-output-channel (axis 0) symmetric int8 weights: scale[c] = max(max |w[c]| / 127,
// floors[c]) (floors empty: the smallest normal float; an all-zero channel without a floor gets
// 1), q = round_half_even(w / scale) in [-127, 127]. Weights must be finite.
struct QuantizedWeights {
  std::vector<int8_t> values;
  QuantParams params;
};
QuantizedWeights quantize_weights(std::span<const float> weights, int64_t channels,
                                  std::span<const float> floors = {});

// int32 bias: round_half_even(b[c] / (x_scale * w_scale[c])), saturated to int32.
std::vector<int32_t> quantize_bias(std::span<const float> bias, float x_scale, std::span<const float> w_scales);

}  // namespace mt::quant
