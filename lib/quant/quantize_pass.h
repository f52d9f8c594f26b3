// The quantize pass (graph -> graph): every node with an int8 kernel whose float inputs were
// calibrated becomes int8 (weights per-channel int8, bias int32, activations per-tensor int8);
// quantize / dequantize nodes are inserted where int8 and float32 parts of the graph meet.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/quant/calibration.h"

namespace mt::quant {

struct QuantizeOptions {
  // Nodes left in float32: node names, and "op:TYPE" for every node of an op type (op:softmax).
  std::set<std::string, std::less<>> keep_fp32;
  bool quantize_io = false;                      // graph inputs and outputs become int8 too
};

struct QuantizeResult {
  Graph graph;
  // For each float32 tensor of the source graph that has an int8 counterpart: its name there.
  std::map<std::string, std::string, std::less<>> int8_tensor;
  struct FloatNode {
    std::string node;
    std::string op;
    std::string reason;  // "no int8 kernel", "--keep-fp32", "input is float32", ...
  };
  std::vector<FloatNode> float_nodes;  // compute nodes left in float32, in graph order
  size_t quantize_nodes = 0;           // quantize / dequantize nodes inserted
  size_t dequantize_nodes = 0;
};

// Quantizes `graph` (float32, typically after mt-fuse) with the calibrated `ranges`. The result
// validates; int8 tensors are named "<float name>_q8", float tensors keep their names. Calibrated
// ranges are widened where needed so that every scale ratio stays inside what the cpu kernels take
// (lib/ops/int8_limits.h), and weight scales are floored per channel (quant_params.h).
QuantizeResult quantize_graph(const Graph& graph, const std::map<std::string, Range, std::less<>>& ranges,
                              const QuantizeOptions& options);

// True when `options.keep_fp32` names the node or its op type.
bool keeps_fp32(const QuantizeOptions& options, const Node& node);

// True when the op has an int8 kernel in the quantized scheme (compute ops), or moves int8 data
// unchanged (shape ops, which keep their input's parameters): the op table's quant column.
bool has_int8_compute(std::string_view op);
bool is_int8_data_movement(std::string_view op);

}  // namespace mt::quant
