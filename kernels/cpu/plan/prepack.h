// The cpu backend's prepacked form (mt-prepack --backend cpu): weights stored in the exact form the
// kernel a plan picks for them reads (packed_forms.h: the packed GEMM's panels, Winograd's
// transformed weights, the int8 VNNI layouts), for the CPU named by --cpu, so that planning reads
// them in place from the memory map; the weights XNNPACK packs itself stored in the order its
// operators take them (OHWI); and optionally graph inputs declared channels-last.
#pragma once

#include <optional>
#include <string>

#include "kernels/cpu/plan/layout.h"
#include "lib/ir/graph.h"
#include "lib/runtime/prepack.h"

namespace mt::cpu {

struct PrepackStats {
  size_t weights_packed = 0;     // weight tensors now stored in a cpu layout (lib/ir/stored_layout.h)
  size_t weights_reordered = 0;  // conv / conv_transpose weight tensors now stored "ohwi"
  size_t inputs_nhwc = 0;        // graph inputs declared "nhwc"
};

// Rewrites `graph` in place (see Backend::prepack) for options.cpu_target (unset: this CPU's,
// native_target()) and records metadata "backend": {"name": "cpu", "target": TARGET} and
// "prepack": {activation_layout, input_layout, target, weights_packed, weights_reordered}. A weight
// read by one node only, whose kernel on such a CPU reads a packed layout, is stored in it; of the
// rest, a weight (float32, or int8 of a quantized conv2d) is reordered to OHWI when every node
// reading it is a conv2d (or every one a conv_transpose2d with group 1) using it as weights. Throws
// Error(usage) for an unknown input layout, Error(unsupported) for "nhwc" on a model without a 4-D
// float input.
PrepackStats prepack_graph(Graph& graph, const PrepackOptions& options);

// nullopt if the cpu backend reads tensor `name` (an input or output of `node`) in its declared
// layout, else the reason: "nhwc" only on 4-D float graph inputs, "ohwi" only on the weights of
// conv2d (float32 or int8) and conv_transpose2d (float32, group 1), a cpu layout only on the input
// whose kernel reads it on some CPU (packed_forms.h). Whether this CPU has that kernel is checked
// when planning (check_packed_weights). `node_checked` as in weight_layout.
std::optional<std::string> check_layout(const Graph& graph, const Node& node, const std::string& name,
                                        bool node_checked = false);

// How a graph input's caller data is ordered (identity or NHWC).
Layout input_layout(const TensorInfo& info);

// The conv2d weights `w` in OHWI order: as stored when they are (or a 1x1 kernel's OIHW, the same
// bytes), else a reordered copy. Any element size.
ConstData ohwi_weights(const TensorInfo& w);

}  // namespace mt::cpu
