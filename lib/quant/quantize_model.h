// The whole of mt-quantize between I/O: calibrate, quantize, optionally correct the biases
// (--bias-correction), optionally move layers whose SQNR is too low back to float32 one at a time
// (--auto-fallback), and report against fp32.
#pragma once

#include <optional>

#include "lib/quant/quant_report.h"

namespace mt::quant {

struct ModelOptions {
  CalibrationOptions calibration;
  QuantizeOptions quantize;
  bool bias_correction = false;            // empirical bias correction of conv2d / linear (bias_correction.h)
  std::optional<double> auto_fallback_db;  // keep layers below this SQNR in float32
  bool report = false;                     // compute the report even without auto-fallback
};

struct ModelResult {
  QuantizeResult quantized;
  std::optional<QuantReport> report;
  std::vector<std::string> fallback_nodes;  // nodes auto-fallback kept in float32, in order chosen
};

ModelResult quantize_model(const Graph& fp32, const std::vector<Sample>& samples, const ModelOptions& options);

}  // namespace mt::quant
