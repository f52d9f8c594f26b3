// The whole of mt-quantize between I/O: calibrate, quantize, optionally correct the biases
// (--bias-correction), optionally move layers whose SQNR is too low back to float32 one at a time
// (--auto-fallback), make sure a target backend runs the result, and report against fp32; and the
// sensitivity analysis (--sensitivity): each layer quantized alone.
#pragma once

#include <optional>

#include "lib/quant/quant_report.h"
#include "lib/runtime/backend.h"

namespace mt::quant {

struct ModelOptions {
  CalibrationOptions calibration;
  QuantizeOptions quantize;
  bool bias_correction = false;            // empirical bias correction of conv2d / linear (bias_correction.h)
  std::optional<double> auto_fallback_db;  // keep layers below this SQNR in float32
  bool report = false;                     // compute the report even without auto-fallback
  // The backend the result must run on (mt-quantize: cpu): int8 nodes it refuses stay float32,
  // and the result is planned on it; a node it still refuses fails with Error(unsupported).
  const Backend* target = nullptr;
  // How the result is planned on target: its kernel paths decide what XNNPACK is asked to accept
  // (mt-quantize: PlanOptions::from_environment(), as mt-run plans it).
  PlanOptions target_options;
};

struct ModelResult {
  QuantizeResult quantized;
  std::optional<QuantReport> report;
  std::vector<std::string> fallback_nodes;  // nodes auto-fallback kept in float32, in order chosen
  struct Refused {
    std::string node;
    std::string reason;
  };
  std::vector<Refused> refused_nodes;  // int8 nodes the target refused, kept in float32
};

ModelResult quantize_model(const Graph& fp32, const std::vector<Sample>& samples, const ModelOptions& options);

// How much quantizing one layer alone (every other node float32) costs at the model's outputs.
struct LayerSensitivity {
  std::string node;
  std::string op;
  double sqnr_db = 0;  // of the output with the worst SQNR; +inf when exact
  double cosine = 1;   // of that output
};

// Every node that quantize_model makes int8 with `options` (calibrated once), quantized alone,
// compared with fp32 on `samples`: most sensitive (lowest output SQNR) first.
std::vector<LayerSensitivity> layer_sensitivity(const Graph& fp32, const std::vector<Sample>& samples,
                                                const ModelOptions& options);

}  // namespace mt::quant
