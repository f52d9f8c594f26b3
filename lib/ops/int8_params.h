// The quantization parameters of int8 tensors as the backends' int8 kernels take them (the scheme of
// docs/ARCHITECTURE.md, Quantization): activations per tensor, weights per output channel.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/ops/int8_arithmetic.h"

namespace mt {

// Per-tensor scale and zero point of an int8 activation.
struct Int8Params {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool operator==(const Int8Params&) const = default;
};

// nullopt if `tensor` is int8 with per-tensor parameters in range (scale finite and positive, zero
// point an int8), else the reason.
std::optional<std::string> check_int8_activation(const Graph& graph, const std::string& tensor);
// The parameters of an activation check_int8_activation accepted.
Int8Params int8_params(const TensorInfo& info);
// The weights' per-output-channel scales (a per-tensor scale repeated).
std::vector<float> int8_weight_scales(const TensorInfo& w);

// fn tabulated for the 256 int8 inputs: quantize(fn(dequantize(q))) with x's then y's parameters at
// q + 128, as the reference int8 kernels compute each value (the cpu and vulkan backends' lookups).
template <typename Fn>
std::array<int8_t, 256> int8_table(Int8Params x, Int8Params y, Fn fn) {
  std::array<int8_t, 256> table{};
  for (int q = -128; q < 128; ++q)
    table[static_cast<size_t>(q + 128)] =
        quantize_value(fn(dequantize_value(static_cast<int8_t>(q), x.scale, x.zero_point)), y.scale, y.zero_point);
  return table;
}

// The requantization from x's parameters to y's (the reference concat's), as a table.
inline std::array<int8_t, 256> int8_requantize_table(Int8Params x, Int8Params y) {
  return int8_table(x, y, [](float v) { return v; });
}

}  // namespace mt
