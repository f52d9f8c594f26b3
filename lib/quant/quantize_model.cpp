#include "lib/quant/quantize_model.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>
#include <set>

#include "lib/core/error.h"
#include "lib/quant/bias_correction.h"
#include "lib/runtime/prepack.h"

namespace mt::quant {

namespace {

// True when `name` is a node of `graph` that writes int8 and is not a quantize node: a layer the
// quantize pass made int8, which keeping it in float32 undoes.
bool is_int8_layer(const Graph& graph, const std::string& name) {
  for (const Node& node : graph.nodes)
    if (node.name == name)
      return node.op != "quantize" && std::any_of(node.outputs.begin(), node.outputs.end(), [&](const std::string& t) {
               return graph.tensor(t).dtype == DType::i8;
             });
  return false;
}

// The int8 layers of `quantized` that `target` refuses; throws Error(unsupported) naming a node it
// refuses that is not one (a float32 node of the model, a dequantize), which keeping layers in
// float32 cannot fix.
std::vector<UnsupportedNode> refused_int8_nodes(const Backend& target, const Graph& quantized) {
  std::vector<UnsupportedNode> refused = check_graph(target, quantized);
  for (const auto& node : refused)
    if (!is_int8_layer(quantized, node.node))
      unsupported("backend '{}' cannot run node '{}' ({}) of the quantized model: {}", target.name(), node.node, node.op,
                  node.reason);
  return refused;
}

// Plans `graph` on `target` as a run would, so that what XNNPACK refuses only when creating its
// operators is found before the model is written.
void require_plans(const Backend& target, const PlanOptions& options, const Graph& graph) {
  try {
    target.plan(graph, options);
  } catch (const Error& error) {
    unsupported("backend '{}' cannot plan the quantized model: {}", target.name(), error.what());
  }
}

}  // namespace

ModelResult quantize_model(const Graph& fp32, const std::vector<Sample>& samples, const ModelOptions& options) {
  // Calibration runs the float model on the reference backend, which has no prepacked form, and
  // the quantized weights must be packed after quantization anyway.
  if (const auto target = packed_backend(fp32))
    unsupported("the model is prepacked for backend '{}': quantize the model from before mt-prepack, then prepack "
                "the int8 model",
                *target);
  const auto ranges = calibrate(fp32, samples, options.calibration);
  QuantizeOptions quantize = options.quantize;
  ModelResult result;
  // Quantizes with the current keep list, then keeps in float32 every int8 node the target refuses
  // (each round can only shrink the int8 part, so this ends).
  const auto quantize_and_correct = [&] {
    for (;;) {
      QuantizeResult quantized = quantize_graph(fp32, ranges, quantize);
      std::vector<UnsupportedNode> refused;
      if (options.target) refused = refused_int8_nodes(*options.target, quantized.graph);
      if (refused.empty()) {
        if (options.bias_correction) {
          const BiasCorrectionStats stats = correct_biases(fp32, quantized, samples);
          spdlog::info("bias correction: {} layers, largest shift {:.2f} output steps", stats.layers, stats.max_shift);
        }
        return quantized;
      }
      for (const auto& node : refused) {
        spdlog::warn("backend '{}' refuses int8 node '{}' ({}): {}; it stays float32", options.target->name(), node.node,
                     node.op, node.reason);
        quantize.keep_fp32.insert(node.node);
        result.refused_nodes.push_back({node.node, node.reason});
      }
    }
  };
  result.quantized = quantize_and_correct();
  if (options.report || options.auto_fallback_db) result.report = compare_quantized(fp32, result.quantized, samples);
  // Errors propagate downstream, so the first layer in graph order below the threshold is the
  // one to move; then measure again, until every int8 layer passes.
  while (options.auto_fallback_db) {
    std::optional<std::string> culprit;
    for (const Node& node : fp32.nodes) {
      for (const auto& layer : result.report->layers)
        if (layer.node == node.name && layer.error.sqnr_db < *options.auto_fallback_db) culprit = node.name;
      if (culprit) break;
    }
    if (!culprit) break;
    spdlog::info("auto-fallback: {} stays float32", *culprit);
    quantize.keep_fp32.insert(*culprit);
    result.fallback_nodes.push_back(*culprit);
    result.quantized = quantize_and_correct();
    result.report = compare_quantized(fp32, result.quantized, samples);
  }
  if (options.target) require_plans(*options.target, options.target_options, result.quantized.graph);
  return result;
}

std::vector<LayerSensitivity> layer_sensitivity(const Graph& fp32, const std::vector<Sample>& samples,
                                                const ModelOptions& options) {
  const auto ranges = calibrate(fp32, samples, options.calibration);
  const QuantizeResult all = quantize_graph(fp32, ranges, options.quantize);
  std::set<std::string, std::less<>> int8_nodes;
  for (const Node& node : fp32.nodes)
    if (has_int8_compute(node.op)) int8_nodes.insert(node.name);
  for (const auto& kept : all.float_nodes) int8_nodes.erase(kept.node);
  std::vector<LayerSensitivity> result;
  for (const Node& node : fp32.nodes) {
    if (!int8_nodes.count(node.name)) continue;
    QuantizeOptions alone = options.quantize;
    for (const Node& other : fp32.nodes)
      if (other.name != node.name) alone.keep_fp32.insert(other.name);
    const QuantReport report = compare_quantized(fp32, quantize_graph(fp32, ranges, alone), samples);
    LayerSensitivity sensitivity{node.name, node.op, std::numeric_limits<double>::infinity(), 1.0};
    for (const auto& output : report.outputs)
      if (output.error.sqnr_db < sensitivity.sqnr_db) {
        sensitivity.sqnr_db = output.error.sqnr_db;
        sensitivity.cosine = output.error.cosine;
      }
    result.push_back(sensitivity);
    spdlog::debug("sensitivity: {} ({}) alone: output SQNR {:.1f} dB", node.name, node.op, sensitivity.sqnr_db);
  }
  std::stable_sort(result.begin(), result.end(),
                   [](const LayerSensitivity& a, const LayerSensitivity& b) { return a.sqnr_db < b.sqnr_db; });
  return result;
}

}  // namespace mt::quant
