#include "lib/quant/quant_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "lib/core/error.h"
#include "lib/ops/int8_arithmetic.h"

namespace mt::quant {
namespace {

// Running sums for ErrorStats.
struct Accumulator {
  double signal = 0, noise = 0, dot = 0, quantized = 0, max_abs = 0;

  void add(double x, double q) {
    signal += x * x;
    noise += (x - q) * (x - q);
    dot += x * q;
    quantized += q * q;
    max_abs = std::max(max_abs, std::abs(x - q));
  }
  ErrorStats stats() const {
    ErrorStats s;
    s.sqnr_db = noise > 0 ? 10.0 * std::log10(signal / noise) : std::numeric_limits<double>::infinity();
    s.cosine = signal > 0 && quantized > 0 ? dot / std::sqrt(signal * quantized) : (signal == quantized ? 1.0 : 0.0);
    s.max_abs_error = max_abs;
    return s;
  }
};

std::string db(double value) { return std::isinf(value) ? "inf" : fmt::format("{:.1f}", value); }

nlohmann::json number(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr); }

nlohmann::json stats_json(const ErrorStats& s) {
  return {{"sqnr_db", number(s.sqnr_db)}, {"cosine", s.cosine}, {"max_abs_error", s.max_abs_error}};
}

}  // namespace

std::vector<float> as_floats(const HostArray& array, const TensorInfo& info) {
  std::vector<float> values(static_cast<size_t>(array.numel()));
  if (array.dtype == DType::f32) {
    std::copy_n(array.as<float>(), values.size(), values.begin());
  } else {
    const float scale = info.quant->scales[0];
    const int32_t zero = info.quant->zero_points[0];
    for (size_t i = 0; i < values.size(); ++i) values[i] = dequantize_value(array.as<int8_t>()[i], scale, zero);
  }
  return values;
}

Sample prepare_sample(const Graph& graph, const Sample& sample) {
  Sample prepared = sample;
  for (size_t i = 0; i < graph.inputs.size() && i < sample.size(); ++i) {
    const TensorInfo& info = graph.tensor(graph.inputs[i]);
    if (info.dtype != DType::i8 || sample[i].dtype != DType::f32) continue;
    ConstData data = ConstData::allocate(static_cast<size_t>(sample[i].numel()));
    auto* q = reinterpret_cast<int8_t*>(data.mutable_data());
    for (int64_t e = 0; e < sample[i].numel(); ++e)
      q[e] = quantize_value(sample[i].as<float>()[e], info.quant->scales[0], info.quant->zero_points[0]);
    prepared[i] = HostArray{DType::i8, info.shape, std::move(data)};
  }
  return prepared;
}

QuantReport compare_quantized(const Graph& fp32, const QuantizeResult& quantized, const std::vector<Sample>& samples) {
  const Graph& q8 = quantized.graph;
  // Layers: int8 outputs of int8 compute nodes, in graph order.
  std::vector<LayerError> layers;
  std::vector<std::string> float_names, int8_names;
  std::set<std::string, std::less<>> float_nodes;
  for (const auto& node : quantized.float_nodes) float_nodes.insert(node.node);
  for (const Node& node : fp32.nodes) {
    // A float node's output may still have an int8 version (quantized for its readers).
    if (!has_int8_compute(node.op) || float_nodes.count(node.name)) continue;
    auto it = quantized.int8_tensor.find(node.outputs[0]);
    if (it == quantized.int8_tensor.end()) continue;
    const QuantParams& params = *q8.tensor(it->second).quant;
    layers.push_back({node.name, node.op, node.outputs[0], {}, params.scales[0], params.zero_points[0]});
    float_names.push_back(node.outputs[0]);
    int8_names.push_back(it->second);
  }
  for (size_t o = 0; o < fp32.outputs.size(); ++o) {
    float_names.push_back(fp32.outputs[o]);
    int8_names.push_back(q8.outputs[o]);
  }

  std::vector<Accumulator> sums(float_names.size());
  std::vector<size_t> agree(fp32.outputs.size(), 0), rows(fp32.outputs.size(), 0);
  for (const Sample& sample : samples) {
    const auto reference = run_and_capture(fp32, sample, float_names);
    const auto result = run_and_capture(q8, prepare_sample(q8, sample), int8_names);
    for (size_t t = 0; t < float_names.size(); ++t) {
      const auto x = as_floats(reference[t], fp32.tensor(float_names[t]));
      const auto q = as_floats(result[t], q8.tensor(int8_names[t]));
      for (size_t i = 0; i < x.size(); ++i) sums[t].add(x[i], q[i]);
      const size_t o = t - layers.size();
      if (t < layers.size() || reference[t].shape.empty()) continue;
      const auto width = static_cast<size_t>(reference[t].shape.back());
      for (size_t r = 0; width > 0 && r < x.size() / width; ++r) {
        const auto row_x = x.begin() + static_cast<std::ptrdiff_t>(r * width);
        const auto row_q = q.begin() + static_cast<std::ptrdiff_t>(r * width);
        agree[o] += std::max_element(row_x, row_x + static_cast<std::ptrdiff_t>(width)) - row_x ==
                    std::max_element(row_q, row_q + static_cast<std::ptrdiff_t>(width)) - row_q;
        ++rows[o];
      }
    }
  }

  QuantReport report;
  for (size_t l = 0; l < layers.size(); ++l) layers[l].error = sums[l].stats();
  std::stable_sort(layers.begin(), layers.end(),
                   [](const LayerError& a, const LayerError& b) { return a.error.sqnr_db < b.error.sqnr_db; });
  report.layers = std::move(layers);
  for (size_t o = 0; o < fp32.outputs.size(); ++o)
    report.outputs.push_back({fp32.outputs[o], sums[report.layers.size() + o].stats(),
                              rows[o] > 0 ? static_cast<double>(agree[o]) / static_cast<double>(rows[o]) : 1.0});
  report.float_nodes = quantized.float_nodes;
  report.quantize_nodes = quantized.quantize_nodes;
  report.dequantize_nodes = quantized.dequantize_nodes;
  for (const Node& node : q8.nodes) report.int8_nodes += has_int8_compute(node.op) && q8.tensor(node.outputs[0]).dtype == DType::i8;
  report.samples = samples.size();
  return report;
}

std::string report_text(const QuantReport& report) {
  std::string text = fmt::format("int8 nodes: {}, float32 nodes: {}, quantize: {}, dequantize: {}; {} samples\n",
                                 report.int8_nodes, report.float_nodes.size(), report.quantize_nodes,
                                 report.dequantize_nodes, report.samples);
  text += fmt::format("{:<32} {:<16} {:>9} {:>9} {:>12} {:>12} {:>5}\n", "node", "op", "SQNR dB", "cosine",
                      "max abs err", "scale", "zero");
  for (const auto& layer : report.layers)
    text += fmt::format("{:<32} {:<16} {:>9} {:>9.5f} {:>12.5g} {:>12.5g} {:>5}\n", layer.node, layer.op,
                        db(layer.error.sqnr_db), layer.error.cosine, layer.error.max_abs_error, layer.scale,
                        layer.zero_point);
  for (const auto& node : report.float_nodes)
    text += fmt::format("{:<32} {:<16} {:>9}  ({})\n", node.node, node.op, "fp32", node.reason);
  for (const auto& output : report.outputs)
    text += fmt::format("output {}: SQNR {} dB, cosine {:.5f}, max abs error {:.5g}, top-1 agreement {:.2f}%\n",
                        output.tensor, db(output.error.sqnr_db), output.error.cosine, output.error.max_abs_error,
                        100.0 * output.top1_agreement);
  return text;
}

nlohmann::json report_json(const QuantReport& report) {
  nlohmann::json layers = nlohmann::json::array(), outputs = nlohmann::json::array(), floats = nlohmann::json::array();
  for (const auto& layer : report.layers) {
    nlohmann::json entry = stats_json(layer.error);
    entry.update({{"node", layer.node}, {"op", layer.op}, {"tensor", layer.tensor}, {"scale", layer.scale},
                  {"zero_point", layer.zero_point}});
    layers.push_back(std::move(entry));
  }
  for (const auto& output : report.outputs) {
    nlohmann::json entry = stats_json(output.error);
    entry.update({{"tensor", output.tensor}, {"top1_agreement", output.top1_agreement}});
    outputs.push_back(std::move(entry));
  }
  for (const auto& node : report.float_nodes) floats.push_back({{"node", node.node}, {"op", node.op}, {"reason", node.reason}});
  return {{"samples", report.samples},   {"int8_nodes", report.int8_nodes}, {"quantize_nodes", report.quantize_nodes},
          {"dequantize_nodes", report.dequantize_nodes}, {"layers", layers}, {"float_nodes", floats},
          {"outputs", outputs}};
}

}  // namespace mt::quant
