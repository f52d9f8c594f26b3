// The cpu backend's prepacked form (mt-prepack --backend cpu): convolution weights stored in the
// order XNNPACK's operators take them, and optionally graph inputs declared channels-last, so that
// planning a model does no weight reordering beyond XNNPACK's own packing.
#pragma once

#include <optional>
#include <string>

#include "kernels/cpu/plan/layout.h"
#include "lib/ir/graph.h"
#include "lib/runtime/prepack.h"

namespace mt::cpu {

struct PrepackStats {
  size_t weights_reordered = 0;  // conv / conv_transpose weight tensors now stored "ohwi"
  size_t inputs_nhwc = 0;        // graph inputs declared "nhwc"
};

// Rewrites `graph` in place (see Backend::prepack) and records metadata "backend": "cpu" and
// "prepack": {activation_layout, input_layout, weights_reordered}. A weight (float32, or int8 of a
// quantized conv2d) is reordered only when every node reading it is a conv2d (or every one a
// conv_transpose2d with group 1) using it as weights. Throws Error(usage) for an unknown input layout, Error(unsupported) for "nhwc" on a model
// without a 4-D float input.
PrepackStats prepack_graph(Graph& graph, const PrepackOptions& options);

// nullopt if the cpu backend reads tensor `name` (an input or output of `node`) in its declared
// layout, else the reason: "nhwc" only on 4-D float graph inputs, "ohwi" only on the weights of
// conv2d (float32 or int8) and conv_transpose2d (float32, group 1).
std::optional<std::string> check_layout(const Graph& graph, const Node& node, const std::string& name);

// How a graph input's caller data is ordered (identity or NHWC).
Layout input_layout(const TensorInfo& info);

}  // namespace mt::cpu
