// batch_norm (unfused: y = x * s[c] + t[c], s and t computed from the statistics) in any
// layout, and layer_norm over the trailing dims (rows contiguous in memory).
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/broadcast.h"

namespace mt::cpu {

std::optional<std::string> check_batch_norm(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_batch_norm(NodeContext& c) {
  const Value x = c.input(0);
  const float epsilon = attr_f32(c.node(), "epsilon");
  const Shape physical = x.physical();
  const int axis = x.shape.size() > 1 ? physical_axis(x.layout, 1) : 0;
  size_t outer = 1, channels = 1, inner = 1;
  for (int k = 0; k < static_cast<int>(physical.size()); ++k) {
    const auto size = static_cast<size_t>(physical[k]);
    if (k < axis) outer *= size;
    else if (k == axis) channels = size;
    else inner *= size;
  }
  std::vector<Value> values{x};
  for (size_t i = 1; i < 5; ++i) values.push_back(c.input(i, identity_layout(1)));
  values.push_back(c.output(0, x.layout));
  // Per-channel factors: recomputed each run (C values) so that non-constant statistics work too.
  std::vector<float> factors(2 * channels);
  c.add_kernel(values, [=](Pointers p, ThreadPool* pool) mutable {
    const auto* in = static_cast<const float*>(p[0]);
    const auto* scale = static_cast<const float*>(p[1]);
    const auto* bias = static_cast<const float*>(p[2]);
    const auto* mean = static_cast<const float*>(p[3]);
    const auto* var = static_cast<const float*>(p[4]);
    auto* out = static_cast<float*>(p[5]);
    float* s = factors.data();
    float* t = s + channels;
    for (size_t ch = 0; ch < channels; ++ch) {
      s[ch] = scale[ch] / std::sqrt(var[ch] + epsilon);
      t[ch] = bias[ch] - mean[ch] * s[ch];
    }
    parallel_chunks(pool, outer * channels, std::max<size_t>(1, 16384 / std::max<size_t>(1, inner)),
                    [&](size_t begin, size_t end) {
                      if (inner == 1) {
                        // Channels innermost (NHWC): whole rows of channels at once.
                        for (size_t row = begin; row < end;) {
                          const size_t ch0 = row % channels;
                          const size_t n = std::min(end - row, channels - ch0);
                          const float* a = in + row;
                          float* b = out + row;
                          for (size_t i = 0; i < n; ++i) b[i] = a[i] * s[ch0 + i] + t[ch0 + i];
                          row += n;
                        }
                        return;
                      }
                      for (size_t unit = begin; unit < end; ++unit) {
                        const float sc = s[unit % channels], sh = t[unit % channels];
                        const float* a = in + unit * inner;
                        float* b = out + unit * inner;
                        for (size_t i = 0; i < inner; ++i) b[i] = a[i] * sc + sh;
                      }
                    });
  });
}

std::optional<std::string> check_layer_norm(const Graph& graph, const Node& node) {
  if (auto reason = check_float(graph, node)) return reason;
  // A scale or bias that broadcasts (rather than matching the normalised dims) is expanded at
  // planning, which needs its values.
  const TensorInfo& x = graph.tensor(node.inputs[0]);
  const auto axis = normalize_axis(attr_int(node, "axis"), x.shape.size());
  if (!axis) return std::nullopt;  // validate() reports it
  const Shape trailing(x.shape.begin() + *axis, x.shape.end());
  for (size_t i = 1; i < 3 && i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    const TensorInfo& info = graph.tensor(node.inputs[i]);
    if (numel(info.shape) != numel(trailing) && !info.is_constant())
      return fmt::format("non-constant {} that broadcasts not supported", i == 1 ? "scale" : "bias");
  }
  return std::nullopt;
}

void plan_layer_norm(NodeContext& c) {
  const Value x0 = c.input(0);
  const size_t rank = x0.shape.size();
  const int axis = axis_of(c.node(), attr_int(c.node(), "axis"), rank);
  // The normalised dims must be the innermost in memory, in logical order.
  bool trailing = true;
  for (size_t k = axis; k < rank; ++k) trailing = trailing && x0.layout[k] == static_cast<int>(k);
  const Layout layout = trailing ? x0.layout : identity_layout(rank);
  const Value x = c.input(0, layout);
  const Shape norm_shape(x.shape.begin() + axis, x.shape.end());
  const size_t width = static_cast<size_t>(numel(norm_shape));
  const size_t rows = width == 0 ? 0 : count_of(x) / width;
  const float epsilon = attr_f32(c.node(), "epsilon");

  // Scale and bias as full rows: used in place when they already are, else expanded once here.
  std::vector<Value> values{x};
  bool has[2] = {false, false};
  for (size_t i = 1; i < 3; ++i) {
    if (!c.has_input(i)) continue;
    has[i - 1] = true;
    const TensorInfo& info = c.input_info(i);
    if (numel(info.shape) == static_cast<int64_t>(width)) {
      values.push_back(c.input(i, identity_layout(info.shape.size())));
      continue;
    }
    auto* row = static_cast<float*>(c.keep(width * sizeof(float)));
    const auto strides = broadcast_strides(info.shape, norm_shape);
    const float* source = c.constant(i).as<float>().data();
    for (size_t e = 0; e < width; ++e) {
      size_t rest = e;
      int64_t offset = 0;
      for (size_t d = norm_shape.size(); d-- > 0;) {
        const size_t size = static_cast<size_t>(norm_shape[d]);
        offset += static_cast<int64_t>(rest % size) * strides[d + strides.size() - norm_shape.size()];
        rest /= size;
      }
      row[e] = source[offset];
    }
    values.push_back(c.owned_constant(row, DType::f32, {static_cast<int64_t>(width)}));
  }
  values.push_back(c.output(0, layout));
  const bool has_scale = has[0], has_bias = has[1];
  c.add_kernel(values, [rows, width, epsilon, has_scale, has_bias](Pointers p, ThreadPool* pool) {
    const auto* in = static_cast<const float*>(p[0]);
    size_t next = 1;
    const float* scale = has_scale ? static_cast<const float*>(p[next++]) : nullptr;
    const float* bias = has_bias ? static_cast<const float*>(p[next++]) : nullptr;
    auto* out = static_cast<float*>(p[next]);
    parallel_chunks(pool, rows, std::max<size_t>(1, 4096 / std::max<size_t>(1, width)), [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const float* a = in + r * width;
        float* b = out + r * width;
        float partial[8] = {};
        size_t i = 0;
        for (; i + 8 <= width; i += 8)
          for (int j = 0; j < 8; ++j) partial[j] += a[i + j];
        for (int j = 0; i < width; ++i, ++j) partial[j] += a[i];
        float sum = 0.0f;
        for (float v : partial) sum += v;
        const float mean = sum / static_cast<float>(width);
        float squares[8] = {};
        for (i = 0; i + 8 <= width; i += 8)
          for (int j = 0; j < 8; ++j) squares[j] += (a[i + j] - mean) * (a[i + j] - mean);
        for (int j = 0; i < width; ++i, ++j) squares[j] += (a[i] - mean) * (a[i] - mean);
        float var = 0.0f;
        for (float v : squares) var += v;
        const float inv = 1.0f / std::sqrt(var / static_cast<float>(width) + epsilon);
        if (scale != nullptr && bias != nullptr) {
          for (i = 0; i < width; ++i) b[i] = (a[i] - mean) * inv * scale[i] + bias[i];
        } else if (scale != nullptr) {
          for (i = 0; i < width; ++i) b[i] = (a[i] - mean) * inv * scale[i];
        } else if (bias != nullptr) {
          for (i = 0; i < width; ++i) b[i] = (a[i] - mean) * inv + bias[i];
        } else {
          for (i = 0; i < width; ++i) b[i] = (a[i] - mean) * inv;
        }
      }
    });
  });
}

}  // namespace mt::cpu
