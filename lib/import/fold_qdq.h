// The QDQ fold of a pre-quantized ONNX model: a float32 op whose activations come from dequantize,
// whose weights are dequantized int8 constants and whose result (through a relu or clamp) goes only
// to one quantize becomes mt's int8 op with the file's scales; what cannot become int8 exactly stays.
#pragma once

#include <string>
#include <vector>

#include "lib/import/import_context.h"

namespace mt::onnx_import {

struct QdqFoldReport {
  size_t int8_nodes = 0;                // ops that became int8
  size_t removed_requantize = 0;        // quantize(dequantize(q)) with q's own parameters, dropped
  std::vector<std::string> float_nodes;  // "node 'NAME' (op): why it stays float32", in graph order
};

// Rewrites `graph` (topologically sorted, its outputs named) in place. Dequantize nodes left without
// readers are for the caller's dead-code removal. Logs each float32 fallback at info level (-v).
// Throws Error(unsupported) for a graph output that is a quantized uint8 tensor (held shifted) and for
// an op other than dequantize and data movement that reads a quantized integer tensor.
QdqFoldReport fold_qdq(Graph& graph, ImportContext& ctx);

}  // namespace mt::onnx_import
