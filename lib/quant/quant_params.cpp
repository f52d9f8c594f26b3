#include "lib/quant/quant_params.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/core/error.h"

namespace mt::quant {

QuantParams activation_params(float lo, float hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) fail(ExitCode::failure, "internal: activation range [{}, {}] is not valid", lo, hi);
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  const float scale = std::max((hi - lo) / 255.0f, 1e-8f);
  const double zero = std::nearbyint(-128.0 - static_cast<double>(lo) / scale);
  QuantParams params;
  params.scales = {scale};
  params.zero_points = {static_cast<int32_t>(std::clamp(zero, -128.0, 127.0))};
  return params;
}

QuantizedWeights quantize_weights(std::span<const float> weights, int64_t channels) {
  if (channels <= 0 || weights.size() % static_cast<size_t>(channels) != 0)
    fail(ExitCode::failure, "internal: {} weights do not split into {} channels", weights.size(), channels);
  const size_t per_channel = weights.size() / static_cast<size_t>(channels);
  QuantizedWeights result;
  result.values.resize(weights.size());
  result.params.axis = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const auto channel = weights.subspan(static_cast<size_t>(c) * per_channel, per_channel);
    float max_abs = 0.0f;
    for (float w : channel) max_abs = std::max(max_abs, std::abs(w));
    const float scale = max_abs > 0.0f && std::isfinite(max_abs) ? max_abs / 127.0f : 1.0f;
    result.params.scales.push_back(scale);
    result.params.zero_points.push_back(0);
    for (size_t i = 0; i < per_channel; ++i) {
      const float q = std::clamp(std::nearbyint(channel[i] / scale), -127.0f, 127.0f);
      result.values[static_cast<size_t>(c) * per_channel + i] = static_cast<int8_t>(std::isnan(q) ? 0.0f : q);
    }
  }
  return result;
}

std::vector<int32_t> quantize_bias(std::span<const float> bias, float x_scale, std::span<const float> w_scales) {
  if (bias.size() != w_scales.size()) fail(ExitCode::failure, "internal: {} bias values for {} weight scales", bias.size(), w_scales.size());
  std::vector<int32_t> result(bias.size());
  constexpr double kMax = std::numeric_limits<int32_t>::max();
  for (size_t c = 0; c < bias.size(); ++c) {
    const double q = std::nearbyint(static_cast<double>(bias[c]) / (static_cast<double>(x_scale) * w_scales[c]));
    result[c] = static_cast<int32_t>(std::clamp(std::isnan(q) ? 0.0 : q, -kMax, kMax));
  }
  return result;
}

}  // namespace mt::quant
