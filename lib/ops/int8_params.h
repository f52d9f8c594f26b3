// The quantization parameters of int8 tensors as the backends' int8 kernels take them (the scheme of
// docs/ARCHITECTURE.md, Quantization): activations per tensor, weights per output channel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/ir/graph.h"

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

}  // namespace mt
