// Reference kernels of the norm family, float32, statistics computed in double.
#include <cmath>
#include <vector>

#include "lib/ops/axis_loops.h"
#include "lib/ops/broadcast.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

void batch_norm(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  for (const auto& input : inputs) require_dtype(node, *input.info, DType::f32);
  const double epsilon = attr_float(node, "epsilon");
  const Shape& shape = inputs[0].info->shape;
  const int64_t batch = shape[0];
  const int64_t channels = shape[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < shape.size(); ++d) spatial *= shape[d];
  const float* x = inputs[0].as<float>();
  const float* scale = inputs[1].as<float>();
  const float* bias = inputs[2].as<float>();
  const float* mean = inputs[3].as<float>();
  const float* var = inputs[4].as<float>();
  float* y = outputs[0].as<float>();
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + epsilon);
      const int64_t base = (n * channels + c) * spatial;
      for (int64_t s = 0; s < spatial; ++s)
        y[base + s] = static_cast<float>((x[base + s] - static_cast<double>(mean[c])) * inv_std * scale[c] + bias[c]);
    }
  }
}

// A layer_norm parameter (scale or bias) expanded to one value per element of the normalised
// dims X.shape[axis:], or `fill` when the input is absent.
std::vector<double> expand_param(const ConstView& param, const Shape& normalized, double fill) {
  std::vector<double> values(static_cast<size_t>(numel(normalized)), fill);
  if (param.info == nullptr) return values;
  const float* data = param.as<float>();
  const std::array<std::vector<int64_t>, 1> strides{broadcast_strides(param.info->shape, normalized)};
  for_each_broadcast(normalized, strides,
                     [&](int64_t i, const std::array<int64_t, 1>& o) { values[static_cast<size_t>(i)] = data[o[0]]; });
  return values;
}

void layer_norm(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  for (const auto& input : inputs)
    if (input.info != nullptr) require_dtype(node, *input.info, DType::f32);
  const Shape& shape = inputs[0].info->shape;
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t axis = attr_int(node, "axis");
  if (axis < 0) axis += rank;
  const double epsilon = attr_float(node, "epsilon");
  const Shape normalized(shape.begin() + axis, shape.end());
  const int64_t inner = numel(normalized);
  const int64_t outer = inner == 0 ? 0 : inputs[0].info->numel() / inner;
  const std::vector<double> scale = expand_param(inputs.size() > 1 ? inputs[1] : ConstView{}, normalized, 1.0);
  const std::vector<double> bias = expand_param(inputs.size() > 2 ? inputs[2] : ConstView{}, normalized, 0.0);
  const float* x = inputs[0].as<float>();
  float* y = outputs[0].as<float>();
  for (int64_t o = 0; o < outer; ++o) {
    const float* row = x + o * inner;
    double mean = 0;
    for (int64_t j = 0; j < inner; ++j) mean += row[j];
    mean /= static_cast<double>(inner);
    // Two passes: the biased variance of the row, without the cancellation of E[x^2] - E[x]^2.
    double var = 0;
    for (int64_t j = 0; j < inner; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(inner);
    const double inv_std = 1.0 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < inner; ++j) {
      const auto k = static_cast<size_t>(j);
      y[o * inner + j] = static_cast<float>((row[j] - mean) * inv_std * scale[k] + bias[k]);
    }
  }
}

// Across the channels (axis 1): lib/ops/axis_loops.h, which the cpu backend runs too.
void lrn_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const AxisView view = axis_view(inputs[0].info->shape, 1);
  const LrnParams params{attr_int(node, "size"), attr_float(node, "alpha"), attr_float(node, "beta"),
                         attr_float(node, "bias")};
  lrn(inputs[0].as<float>(), outputs[0].as<float>(), view, view.outer, params);
}

}  // namespace

void register_norm_kernels(KernelTable& table) {
  table.add("batch_norm", batch_norm);
  table.add("layer_norm", layer_norm);
  table.add("lrn", lrn_kernel);
}

}  // namespace mt::reference
