#include "kernels/cpu/plan/prepack.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "kernels/cpu/plan/kernel_paths.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "lib/core/error.h"
#include "lib/ir/stored_layout.h"
#include "lib/ops/registry.h"

namespace mt::cpu {
namespace {

using ReadersMap = std::unordered_map<std::string, std::vector<size_t>>;

bool is_conv(const Node& node) { return node.op == "conv2d" || node.op == "conv_transpose2d"; }

bool is_graph_output(const Graph& graph, const std::string& name) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), name) != graph.outputs.end();
}

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

// The weights each node's kernel reads packed on a CPU of `paths`, packed from the model's plain
// weights: only those read by that node alone (a packed block holds the node's bias and, for int8,
// its input zero point and scales) and not a graph output.
size_t pack_for_kernels(Graph& graph, const KernelPaths& paths, const ReadersMap& readers) {
  size_t packed = 0;
  for (const Node& node : graph.nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::optional<CpuLayout> layout = weight_layout(graph, node, i, paths);
      if (!layout) continue;
      const std::string& name = node.inputs[i];
      const TensorInfo& info = graph.tensor(name);
      if (!info.is_constant() || !info.layout.empty() || is_graph_output(graph, name) || readers.at(name).size() != 1)
        continue;
      const std::string tag(cpu_layout_tag(*layout));
      ConstData data = ConstData::allocate(static_cast<size_t>(stored_byte_size(info.dtype, info.shape, tag)));
      pack_weights(graph, node, i, *layout, data.mutable_data());
      TensorInfo& stored = graph.tensor(name);
      stored.data = std::move(data);
      stored.layout = tag;
      ++packed;
    }
  }
  return packed;
}

}  // namespace

PrepackStats prepack_graph(Graph& graph, const PrepackOptions& options) {
  if (options.input_layout != "nchw" && options.input_layout != kLayoutNhwc)
    fail(ExitCode::usage, "input layout '{}' is not one of nchw, nhwc", options.input_layout);
  if (options.precision != "fp32") fail(ExitCode::usage, "precision {}: the cpu prepacked form is fp32", options.precision);
  const CpuTarget target = options.cpu_target.value_or(native_target());
  PrepackStats stats;
  const auto readers = graph.consumers();
  stats.weights_packed = pack_for_kernels(graph, target_paths(target), readers);
  for (const Node& node : graph.nodes) {
    if (!is_conv(node) || node.inputs.size() < 2) continue;
    const std::string& name = node.inputs[1];
    TensorInfo& info = graph.tensor(name);
    if (!info.layout.empty() || !packable_weights(info, node) || is_graph_output(graph, name)) continue;
    if (!only_weights_of_one_conv_kind(graph, readers.at(name), name)) continue;
    info.data = reorder_to_ohwi(info, node.op == "conv_transpose2d");
    info.layout = kLayoutOhwi;
    ++stats.weights_reordered;
  }
  if (options.input_layout == kLayoutNhwc) {
    for (const auto& name : graph.inputs) {
      TensorInfo& info = graph.tensor(name);
      if (info.dtype != DType::f32 || info.shape.size() != 4 || !info.layout.empty() || is_graph_output(graph, name))
        continue;
      info.layout = kLayoutNhwc;
      ++stats.inputs_nhwc;
    }
    if (stats.inputs_nhwc == 0)
      unsupported("--input-layout nhwc: the model has no 4-D float32 input to declare channels-last");
  }
  graph.metadata["backend"] = {{"name", "cpu"}, {"target", cpu_target_name(target)}};
  graph.metadata["prepack"] = {{"activation_layout", kLayoutNhwc},
                               {"input_layout", options.input_layout},
                               {"target", cpu_target_name(target)},
                               {"weights_packed", stats.weights_packed},
                               {"weights_reordered", stats.weights_packed + stats.weights_reordered}};
  return stats;
}

std::optional<std::string> check_layout(const Graph& graph, const Node& node, const std::string& name,
                                        bool node_checked) {
  const TensorInfo& info = graph.tensor(name);
  if (info.layout.empty()) return std::nullopt;
  if (info.layout == kLayoutNhwc && info.dtype == DType::f32 && info.shape.size() == 4 &&
      std::find(graph.inputs.begin(), graph.inputs.end(), name) != graph.inputs.end())
    return std::nullopt;
  if (info.layout == kLayoutOhwi && packable_conv(node) && node.inputs.size() > 1 && node.inputs[1] == name &&
      packable_weights(info, node))
    return std::nullopt;
  // A packed layout where the node's kernel reads it on some CPU: AVX-512's, or one without our own
  // kernels (Winograd's points for XNNPACK).
  if (const std::optional<CpuLayout> stored = parse_cpu_layout(info.layout); stored && info.is_constant()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i] != name) continue;
      if (weight_layout(graph, node, i, target_paths(CpuTarget::avx512), node_checked) == stored ||
          weight_layout(graph, node, i, target_paths(CpuTarget::generic), node_checked) == stored)
        return std::nullopt;
    }
  }
  return fmt::format("tensor '{}' has layout '{}', which cpu does not read here", name, info.layout);
}

ConstData ohwi_weights(const TensorInfo& w) {
  if (w.layout == kLayoutOhwi || (w.shape[2] == 1 && w.shape[3] == 1)) return w.data;
  return reorder_to_ohwi(w, /*transposed=*/false);
}

Layout input_layout(const TensorInfo& info) {
  return info.layout == kLayoutNhwc ? nhwc_layout() : identity_layout(info.shape.size());
}

}  // namespace mt::cpu
