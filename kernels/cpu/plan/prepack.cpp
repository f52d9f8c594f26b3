#include "kernels/cpu/plan/prepack.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "lib/core/error.h"
#include "lib/ops/registry.h"

namespace mt::cpu {
namespace {

bool is_conv(const Node& node) { return node.op == "conv2d" || node.op == "conv_transpose2d"; }

// Weights XNNPACK takes as [groups][out/g][kH][kW][in/g]; conv_transpose2d's are only a plain
// permutation of its [in, out/g, kH, kW] weights when there is one group.
bool packable_conv(const Node& node) {
  return node.op == "conv2d" || (node.op == "conv_transpose2d" && attr_int(node, "group") == 1);
}

// Constant 4-D weights the cpu kernels of `conv` hand to XNNPACK in OHWI order: float32, or int8
// with quantization parameters for conv2d (the qc8 kernel; per-channel scales stay on axis 0, O).
bool packable_weights(const TensorInfo& info, const Node& conv) {
  if (!info.is_constant() || info.shape.size() != 4) return false;
  return (info.dtype == DType::f32 && !info.quant) || (info.dtype == DType::i8 && info.quant && conv.op == "conv2d");
}

// conv2d [O, I, kH, kW] or conv_transpose2d [I, O, kH, kW] -> [O, kH, kW, I], for any element size.
ConstData reorder_to_ohwi(const TensorInfo& info, bool transposed) {
  const auto d0 = static_cast<size_t>(info.shape[0]), d1 = static_cast<size_t>(info.shape[1]);
  const size_t kernel = static_cast<size_t>(info.shape[2]) * static_cast<size_t>(info.shape[3]);
  const size_t out = transposed ? d1 : d0, in = transposed ? d0 : d1;
  const size_t size = dtype_size(info.dtype);
  const std::byte* w = info.data.data();
  ConstData result = ConstData::allocate(info.byte_size());
  std::byte* packed = result.mutable_data();
  for (size_t o = 0; o < out; ++o)
    for (size_t i = 0; i < in; ++i) {
      const std::byte* source = w + (transposed ? i * out + o : o * in + i) * kernel * size;
      for (size_t s = 0; s < kernel; ++s) std::memcpy(packed + ((o * kernel + s) * in + i) * size, source + s * size, size);
    }
  return result;
}

// True when tensor `name` is read only as input 1 (weights) of nodes with one packable conv op.
bool only_weights_of_one_conv_kind(const Graph& graph, const std::vector<size_t>& readers, const std::string& name) {
  const std::string& op = graph.nodes[readers.front()].op;
  for (size_t index : readers) {
    const Node& node = graph.nodes[index];
    if (node.op != op || !packable_conv(node)) return false;
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] == name && k != 1) return false;
  }
  return true;
}

}  // namespace

PrepackStats prepack_graph(Graph& graph, const PrepackOptions& options) {
  if (options.input_layout != "nchw" && options.input_layout != kLayoutNhwc)
    fail(ExitCode::usage, "input layout '{}' is not one of nchw, nhwc", options.input_layout);
  if (options.precision != "fp32") fail(ExitCode::usage, "precision {}: the cpu prepacked form is fp32", options.precision);
  PrepackStats stats;
  const auto readers = graph.consumers();
  auto is_graph_output = [&](const std::string& name) {
    return std::find(graph.outputs.begin(), graph.outputs.end(), name) != graph.outputs.end();
  };
  for (const Node& node : graph.nodes) {
    if (!is_conv(node) || node.inputs.size() < 2) continue;
    const std::string& name = node.inputs[1];
    TensorInfo& info = graph.tensor(name);
    if (!info.layout.empty() || !packable_weights(info, node) || is_graph_output(name)) continue;
    if (!only_weights_of_one_conv_kind(graph, readers.at(name), name)) continue;
    info.data = reorder_to_ohwi(info, node.op == "conv_transpose2d");
    info.layout = kLayoutOhwi;
    ++stats.weights_reordered;
  }
  if (options.input_layout == kLayoutNhwc) {
    for (const auto& name : graph.inputs) {
      TensorInfo& info = graph.tensor(name);
      if (info.dtype != DType::f32 || info.shape.size() != 4 || !info.layout.empty() || is_graph_output(name)) continue;
      info.layout = kLayoutNhwc;
      ++stats.inputs_nhwc;
    }
    if (stats.inputs_nhwc == 0)
      unsupported("--input-layout nhwc: the model has no 4-D float32 input to declare channels-last");
  }
  graph.metadata["backend"] = "cpu";
  graph.metadata["prepack"] = {{"activation_layout", kLayoutNhwc},
                               {"input_layout", options.input_layout},
                               {"weights_reordered", stats.weights_reordered}};
  return stats;
}

std::optional<std::string> check_layout(const Graph& graph, const Node& node, const std::string& name) {
  const TensorInfo& info = graph.tensor(name);
  if (info.layout.empty()) return std::nullopt;
  if (info.layout == kLayoutNhwc && info.dtype == DType::f32 && info.shape.size() == 4 &&
      std::find(graph.inputs.begin(), graph.inputs.end(), name) != graph.inputs.end())
    return std::nullopt;
  if (info.layout == kLayoutOhwi && packable_conv(node) && node.inputs.size() > 1 && node.inputs[1] == name &&
      packable_weights(info, node))
    return std::nullopt;
  return fmt::format("tensor '{}' has layout '{}', which cpu does not read here", name, info.layout);
}

Layout input_layout(const TensorInfo& info) {
  return info.layout == kLayoutNhwc ? nhwc_layout() : identity_layout(info.shape.size());
}

}  // namespace mt::cpu
