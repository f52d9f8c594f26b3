#include "lib/ops/int8_params.h"

#include <fmt/format.h>

#include <cmath>

namespace mt {

std::optional<std::string> check_int8_activation(const Graph& graph, const std::string& tensor) {
  const TensorInfo& info = graph.tensor(tensor);
  if (info.dtype != DType::i8) return fmt::format("tensor '{}' must be int8", tensor);
  if (!info.quant || info.quant->axis >= 0 || info.quant->scales.size() != 1 || info.quant->zero_points.size() != 1)
    return fmt::format("int8 tensor '{}' needs per-tensor quantization parameters", tensor);
  const float scale = info.quant->scales[0];
  const int32_t zero_point = info.quant->zero_points[0];
  if (!(scale > 0.0f) || !std::isfinite(scale) || zero_point < -128 || zero_point > 127)
    return fmt::format("int8 tensor '{}': scale {} or zero point {} out of range", tensor, scale, zero_point);
  return std::nullopt;
}

Int8Params int8_params(const TensorInfo& info) { return {info.quant->scales[0], info.quant->zero_points[0]}; }

std::vector<float> int8_weight_scales(const TensorInfo& w) {
  const size_t channels = static_cast<size_t>(w.shape.at(0));
  return w.quant->scales.size() == channels ? w.quant->scales : std::vector<float>(channels, w.quant->scales[0]);
}

}  // namespace mt
