// The int8 scheme's parameter math: asymmetric per-tensor activation parameters from a range,
// symmetric per-output-channel weights and int32 bias (XNNPACK's qs8 / qc8 operators).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lib/ir/tensor.h"

namespace mt::quant {

// Scale and zero point covering [lo, hi] widened to include 0 (so real zero, e.g. padding, is
// exact): scale = max((hi - lo) / 255, 1e-8), zero_point = round(-128 - lo / scale) clamped to
// [-128, 127]. The floor on the scale keeps an all-zero tensor representable.
QuantParams activation_params(float lo, float hi);

// Per-output-channel (axis 0) symmetric int8 weights: scale[c] = max |w[c]| / 127 (1 when the
// channel is all zero), q = round_half_even(w / scale) in [-127, 127].
struct QuantizedWeights {
  std::vector<int8_t> values;
  QuantParams params;
};
QuantizedWeights quantize_weights(std::span<const float> weights, int64_t channels);

// int32 bias: round_half_even(b[c] / (x_scale * w_scale[c])), saturated to int32.
std::vector<int32_t> quantize_bias(std::span<const float> bias, float x_scale, std::span<const float> w_scales);

}  // namespace mt::quant
