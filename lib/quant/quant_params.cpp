#include "lib/quant/quant_params.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/core/error.h"
#include "lib/ops/int8_limits.h"

namespace mt::quant {

QuantParams activation_params(float lo, float hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) fail(ExitCode::failure, "internal: activation range [{}, {}] is not valid", lo, hi);
  const float low = std::min(lo, 0.0f), high = std::max(hi, 0.0f);
  float scale = (high - low) / 255.0f;
  // A range wider than the largest float (outliers near the limits): the same in double.
  if (!std::isfinite(scale)) scale = static_cast<float>((static_cast<double>(high) - low) / 255.0);
  scale = std::max(scale, kMinActivationScale);
  const double zero = std::nearbyint(-128.0 - static_cast<double>(low) / scale);
  QuantParams params;
  params.scales = {scale};
  params.zero_points = {static_cast<int32_t>(std::clamp(zero, -128.0, 127.0))};
  return params;
}

Range widen_to_scale(Range range, double min_scale) {
  const double lo = std::min(range.lo, 0.0f), hi = std::max(range.hi, 0.0f);
  const double missing = min_scale * 255.0 - (hi - lo);
  if (missing <= 0) return range;
  // A little over, so that rounding the new bounds to float cannot leave the scale just short.
  const double grow = missing * (1.0 + 1e-6);
  const double width = hi - lo;
  const double up = width > 0 ? grow * hi / width : grow / 2, down = width > 0 ? grow * -lo / width : grow / 2;
  constexpr double kMax = std::numeric_limits<float>::max();
  return {static_cast<float>(std::max(lo - down, -kMax)), static_cast<float>(std::min(hi + up, kMax))};
}

float weight_scale_floor(float x_scale, float y_scale, float bias) {
  const double requantization = 2.0 * int8_limits::kRequantization.min * y_scale / x_scale;
  const double bias_fits = std::abs(static_cast<double>(bias)) / (static_cast<double>(x_scale) * kMaxBiasSteps);
  const double floor = std::max({requantization, bias_fits, static_cast<double>(std::numeric_limits<float>::min())});
  return static_cast<float>(std::min(floor, static_cast<double>(std::numeric_limits<float>::max())));
}

QuantizedWeights quantize_weights(std::span<const float> weights, int64_t channels, std::span<const float> floors) {
  if (channels <= 0 || weights.size() % static_cast<size_t>(channels) != 0)
    fail(ExitCode::failure, "internal: {} weights do not split into {} channels", weights.size(), channels);
  if (!floors.empty() && floors.size() != static_cast<size_t>(channels))
    fail(ExitCode::failure, "internal: {} scale floors for {} channels", floors.size(), channels);
  const size_t per_channel = weights.size() / static_cast<size_t>(channels);
  QuantizedWeights result;
  result.values.resize(weights.size());
  result.params.axis = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const auto channel = weights.subspan(static_cast<size_t>(c) * per_channel, per_channel);
    float max_abs = 0.0f;
    for (float w : channel) max_abs = std::max(max_abs, std::abs(w));
    if (!std::isfinite(max_abs)) fail(ExitCode::failure, "internal: weights of channel {} are not finite", c);
    const float floor = floors.empty() ? std::numeric_limits<float>::min() : floors[static_cast<size_t>(c)];
    const float scale = floors.empty() && max_abs == 0.0f ? 1.0f : std::max(max_abs / 127.0f, floor);
    result.params.scales.push_back(scale);
    result.params.zero_points.push_back(0);
    for (size_t i = 0; i < per_channel; ++i) {
      const float q = std::clamp(std::nearbyint(channel[i] / scale), -127.0f, 127.0f);
      result.values[static_cast<size_t>(c) * per_channel + i] = static_cast<int8_t>(q);
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
