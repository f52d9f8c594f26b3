#include "lib/quant/quantize_model.h"

#include <spdlog/spdlog.h>

#include "lib/core/error.h"
#include "lib/quant/bias_correction.h"
#include "lib/runtime/prepack.h"

namespace mt::quant {

ModelResult quantize_model(const Graph& fp32, const std::vector<Sample>& samples, const ModelOptions& options) {
  // Calibration runs the float model on the reference backend, which has no prepacked form, and
  // the quantized weights must be packed after quantization anyway.
  if (const auto target = packed_backend(fp32))
    unsupported("the model is prepacked for backend '{}': quantize the model from before mt-prepack, then prepack "
                "the int8 model",
                *target);
  const auto ranges = calibrate(fp32, samples, options.calibration);
  QuantizeOptions quantize = options.quantize;
  const auto quantize_and_correct = [&] {
    QuantizeResult quantized = quantize_graph(fp32, ranges, quantize);
    if (options.bias_correction) {
      const BiasCorrectionStats stats = correct_biases(fp32, quantized, samples);
      spdlog::info("bias correction: {} layers, largest shift {:.2f} output steps", stats.layers, stats.max_shift);
    }
    return quantized;
  };
  ModelResult result{quantize_and_correct(), std::nullopt, {}};
  if (!options.report && !options.auto_fallback_db) return result;
  result.report = compare_quantized(fp32, result.quantized, samples);
  if (!options.auto_fallback_db) return result;
  // Errors propagate downstream, so the first layer in graph order below the threshold is the
  // one to move; then measure again, until every int8 layer passes.
  for (;;) {
    std::optional<std::string> culprit;
    for (const Node& node : fp32.nodes) {
      for (const auto& layer : result.report->layers)
        if (layer.node == node.name && layer.error.sqnr_db < *options.auto_fallback_db) culprit = node.name;
      if (culprit) break;
    }
    if (!culprit) return result;
    spdlog::info("auto-fallback: {} stays float32", *culprit);
    quantize.keep_fp32.insert(*culprit);
    result.fallback_nodes.push_back(*culprit);
    result.quantized = quantize_and_correct();
    result.report = compare_quantized(fp32, result.quantized, samples);
  }
}

}  // namespace mt::quant
