#include "lib/quant/bias_correction.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "lib/ops/conv_geometry.h"
#include "lib/ops/registry.h"
#include "lib/passes/graph_edit.h"
#include "lib/quant/calibration.h"
#include "lib/quant/quant_params.h"
#include "lib/quant/quant_report.h"
#include "lib/runtime/run_once.h"

namespace mt::quant {
namespace {

using Values = std::map<std::string, HostArray, std::less<>>;

bool is_layer(const Node& node) { return node.op == "conv2d" || node.op == "linear"; }

int64_t groups(const Node& node) { return node.op == "conv2d" ? attr_int(node, "group") : 1; }

// The mean output of every channel: sum over the channel's weights of weight * mean_patch (the
// patch of the channel's group) plus the bias.
std::vector<double> mean_output(const Node& node, const Shape& weight_shape, std::span<const float> weights,
                                std::span<const float> bias, const std::vector<double>& patch) {
  const auto channels = static_cast<size_t>(weight_shape[0]);
  const size_t per_channel = weights.size() / channels;
  const size_t per_group = channels / static_cast<size_t>(groups(node));
  std::vector<double> mean(channels);
  for (size_t m = 0; m < channels; ++m) {
    const size_t offset = m / per_group * per_channel;
    double sum = bias.empty() ? 0.0 : bias[m];
    for (size_t i = 0; i < per_channel; ++i) sum += static_cast<double>(weights[m * per_channel + i]) * patch[offset + i];
    mean[m] = sum;
  }
  return mean;
}

void accumulate(std::vector<double>& sum, const std::vector<double>& values) {
  if (sum.empty()) sum.assign(values.size(), 0.0);
  for (size_t i = 0; i < values.size(); ++i) sum[i] += values[i];
}

// Runs `node` alone (a one-node graph of `graph`'s tensors) on the reference backend, its
// non-constant inputs taken from `values`, and stores its outputs there.
void run_node(const Graph& graph, const Node& node, Values& values) {
  Graph one;
  std::vector<HostArray> inputs;
  for (const auto& input : node.inputs) {
    if (input.empty() || one.has_tensor(input)) continue;
    const TensorInfo& info = one.add_tensor(graph.tensor(input));
    if (info.is_constant()) continue;
    one.inputs.push_back(input);
    inputs.push_back(values.at(input));
  }
  for (const auto& output : node.outputs) {
    if (output.empty()) continue;
    one.add_tensor(graph.tensor(output));
    one.outputs.push_back(output);
  }
  one.nodes.push_back(node);
  RunResult result = run_once(reference_backend(), one, PlanOptions{}, inputs);
  for (size_t o = 0; o < one.outputs.size(); ++o) values[one.outputs[o]] = std::move(result.outputs[o]);
}

// The values of an int32 constant, or zeros when `tensor` is absent.
std::vector<int32_t> bias_values(const Graph& graph, const std::string& tensor, size_t channels) {
  if (tensor.empty()) return std::vector<int32_t>(channels, 0);
  const auto data = graph.tensor(tensor).data.as<int32_t>();
  return {data.begin(), data.end()};
}

// Adds to the int32 bias of int8 layer `node` of `q8` (one is created if it has none) the
// difference between its fp32 mean output per channel (`target`) and its mean output on `values`,
// the int8 model's own inputs to it on every sample.
void correct_layer(Graph& q8, Node& node, const std::vector<double>& target, const std::vector<Values>& values,
                   BiasCorrectionStats& stats) {
  const TensorInfo& x = q8.tensor(node.inputs[0]);
  const TensorInfo& w = q8.tensor(node.inputs[1]);
  std::vector<double> patch;
  for (const Values& sample : values) {
    const auto input = as_floats(sample.at(node.inputs[0]), x);
    accumulate(patch, mean_patch(node, w.shape, x.shape, input));
  }
  for (double& p : patch) p /= static_cast<double>(values.size());
  const std::vector<float>& w_scales = w.quant->scales;
  const float x_scale = x.quant->scales[0];
  const auto channels = static_cast<size_t>(w.shape[0]);
  const auto w_q = w.data.as<int8_t>();
  const size_t per_channel = w_q.size() / channels;
  std::vector<float> w_real(w_q.size()), b_real(channels);
  for (size_t i = 0; i < w_q.size(); ++i) w_real[i] = static_cast<float>(w_q[i]) * w_scales[i / per_channel];
  const std::string bias_name = node.inputs.size() > 2 ? node.inputs[2] : std::string();
  const auto b_q = bias_values(q8, bias_name, channels);
  for (size_t m = 0; m < channels; ++m) b_real[m] = static_cast<float>(b_q[m]) * x_scale * w_scales[m];
  const auto current = mean_output(node, w.shape, w_real, b_real, patch);
  const float out_scale = q8.tensor(node.outputs[0]).quant->scales[0];
  for (size_t m = 0; m < channels; ++m) {
    const double shift = target[m] - current[m];
    stats.max_shift = std::max(stats.max_shift, std::abs(shift) / out_scale);
    b_real[m] = static_cast<float>(b_real[m] + shift);
  }
  const auto corrected = quantize_bias(b_real, x_scale, w_scales);
  const auto bytes = ConstData::copy_of(corrected.data(), corrected.size() * sizeof(int32_t));
  if (!bias_name.empty()) {
    q8.tensor(bias_name).data = bytes;
  } else {
    QuantParams params{.axis = 0};
    for (float s : w_scales) {
      params.scales.push_back(x_scale * s);
      params.zero_points.push_back(0);
    }
    const std::string name = passes::unique_tensor_name(q8, node.name + "_bias_q32");
    q8.add_tensor({.name = name, .dtype = DType::i32, .shape = {w.shape[0]}, .quant = params, .data = bytes});
    node.inputs.resize(3);
    node.inputs[2] = name;
  }
}

}  // namespace

std::vector<double> mean_patch(const Node& node, const Shape& weight_shape, const Shape& input_shape,
                               std::span<const float> values) {
  if (node.op == "linear") {
    const auto k = static_cast<size_t>(input_shape.back());
    const size_t rows = values.size() / k;
    std::vector<double> patch(k, 0.0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t i = 0; i < k; ++i) patch[i] += values[r * k + i];
    for (double& p : patch) p /= static_cast<double>(std::max<size_t>(rows, 1));
    return patch;
  }
  const Window2d window = conv_window(node, weight_shape);
  const int64_t batch = input_shape[0], channels = input_shape[1], height = input_shape[2], width = input_shape[3];
  const int64_t out_h = window_output_length(window, 0, height).value();
  const int64_t out_w = window_output_length(window, 1, width).value();
  const int64_t kh = window.kernel[0], kw = window.kernel[1];
  std::vector<double> patch(static_cast<size_t>(channels * kh * kw), 0.0);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      const float* plane = values.data() + (n * channels + c) * height * width;
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
          double sum = 0;
          for (int64_t oy = 0; oy < out_h; ++oy) {
            const int64_t y = oy * window.stride[0] + i * window.dilation[0] - window.pad_begin[0];
            if (y < 0 || y >= height) continue;
            for (int64_t ox = 0; ox < out_w; ++ox) {
              const int64_t x = ox * window.stride[1] + j * window.dilation[1] - window.pad_begin[1];
              if (x >= 0 && x < width) sum += plane[y * width + x];
            }
          }
          patch[static_cast<size_t>((c * kh + i) * kw + j)] += sum;
        }
    }
  const auto positions = static_cast<double>(batch * out_h * out_w);
  for (double& p : patch) p /= positions;
  return patch;
}

BiasCorrectionStats correct_biases(const Graph& fp32, QuantizeResult& quantized, const std::vector<Sample>& samples) {
  Graph& q8 = quantized.graph;
  std::map<std::string, const Node*, std::less<>> source;
  for (const Node& node : fp32.nodes) source[node.name] = &node;
  // The int8 layers (int8 input, from a float layer of the same name) and their fp32 inputs.
  std::vector<const Node*> layers;
  std::vector<std::string> fp32_inputs;
  for (const Node& node : q8.nodes) {
    const auto it = source.find(node.name);
    if (!is_layer(node) || q8.tensor(node.inputs[0]).dtype != DType::i8 || it == source.end()) continue;
    layers.push_back(it->second);
    fp32_inputs.push_back(it->second->inputs[0]);
  }
  BiasCorrectionStats stats;
  if (layers.empty() || samples.empty()) return stats;

  // What each layer's channels average in the fp32 model.
  std::vector<std::vector<double>> patch_sums(layers.size());
  for (const Sample& sample : samples) {
    const auto captured = run_and_capture(fp32, sample, fp32_inputs);
    for (size_t l = 0; l < layers.size(); ++l)
      accumulate(patch_sums[l], mean_patch(*layers[l], fp32.tensor(layers[l]->inputs[1]).shape, captured[l].shape,
                                           {captured[l].as<float>(), static_cast<size_t>(captured[l].numel())}));
  }
  std::map<std::string, std::vector<double>, std::less<>> target;
  for (size_t l = 0; l < layers.size(); ++l) {
    const Node& node = *layers[l];
    for (double& p : patch_sums[l]) p /= static_cast<double>(samples.size());
    const auto weights = passes::constant_floats(fp32, node.inputs[1]).value();
    std::vector<float> bias;
    if (node.inputs.size() > 2 && !node.inputs[2].empty()) bias = passes::constant_floats(fp32, node.inputs[2]).value();
    target[node.name] = mean_output(node, fp32.tensor(node.inputs[1]).shape, weights, bias, patch_sums[l]);
  }

  // The int8 model node by node on every sample; each layer is corrected just before it runs.
  std::vector<Values> values(samples.size());
  for (size_t s = 0; s < samples.size(); ++s) {
    const Sample prepared = prepare_sample(q8, samples[s]);
    for (size_t i = 0; i < q8.inputs.size(); ++i) values[s][q8.inputs[i]] = prepared[i];
  }
  std::map<std::string, size_t, std::less<>> reads;  // node inputs still to run, to free values
  for (const Node& node : q8.nodes)
    for (const auto& input : node.inputs) ++reads[input];
  for (Node& node : q8.nodes) {
    if (const auto it = target.find(node.name); it != target.end()) {
      correct_layer(q8, node, it->second, values, stats);
      ++stats.layers;
    }
    for (auto& sample : values) run_node(q8, node, sample);
    for (const auto& input : node.inputs)
      if (--reads[input] == 0)
        for (auto& sample : values) sample.erase(input);
  }
  q8.validate();
  return stats;
}

}  // namespace mt::quant
