// What quantization cost: the int8 graph against the fp32 graph on the calibration samples,
// per layer (SQNR, cosine, max abs error of each int8 tensor, dequantized, against its fp32
// value), worst first, plus the final outputs and the nodes left in float32.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lib/quant/quantize_pass.h"

namespace mt::quant {

struct ErrorStats {
  double sqnr_db = 0;  // 10 log10(sum x^2 / sum (x - q)^2); +inf when exact
  double cosine = 1;
  double max_abs_error = 0;
};

struct LayerError {
  std::string node;
  std::string op;
  std::string tensor;  // the float32 name
  ErrorStats error;
  float scale = 0;
  int32_t zero_point = 0;
};

struct OutputError {
  std::string tensor;
  ErrorStats error;
  double top1_agreement = 1;  // fraction of samples whose argmax (last axis, row by row) matches fp32
};

struct QuantReport {
  std::vector<LayerError> layers;  // worst SQNR first
  std::vector<OutputError> outputs;
  std::vector<QuantizeResult::FloatNode> float_nodes;
  size_t quantize_nodes = 0;
  size_t dequantize_nodes = 0;
  size_t int8_nodes = 0;
  size_t samples = 0;
};

// Runs `fp32` and `quantized` (made from it by quantize_graph) on every sample with the
// reference backend and compares them.
QuantReport compare_quantized(const Graph& fp32, const QuantizeResult& quantized, const std::vector<Sample>& samples);

std::string report_text(const QuantReport& report);
nlohmann::json report_json(const QuantReport& report);

// The values of a captured array as float: an int8 array dequantized with `info`'s per-tensor
// parameters.
std::vector<float> as_floats(const HostArray& array, const TensorInfo& info);

// A sample for `graph`, whose int8 inputs (--quantize-io) get the float sample quantized.
Sample prepare_sample(const Graph& graph, const Sample& sample);

}  // namespace mt::quant
