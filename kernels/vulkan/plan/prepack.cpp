#include "kernels/vulkan/plan/prepack.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/vulkan/plan/weight_layout.h"
#include "lib/core/error.h"
#include "lib/ops/registry.h"

namespace mt::vulkan {
namespace {

bool is_graph_output(const Graph& graph, const std::string& name) {
  return std::find(graph.outputs.begin(), graph.outputs.end(), name) != graph.outputs.end();
}

// A row-major constant the planner packs: float32 values (NodeContext::constant), or int8 weights.
bool packable_constant(const TensorInfo& info) {
  if (!info.is_constant() || !info.layout.empty()) return false;
  return (info.dtype == DType::f32 && !info.quant) || (info.dtype == DType::i8 && info.quant);
}

// Whether node reads int8 weights (input 1): an int8 conv2d or linear.
bool int8_weights(const Graph& graph, const Node& node) {
  return node.inputs.size() > 1 && !node.inputs[1].empty() && graph.tensor(node.inputs[1]).dtype == DType::i8;
}

// True when every reader of `name` reads it in `layout`.
bool read_only_as(const Graph& graph, const std::vector<size_t>& readers, const std::string& name,
                  VulkanLayout layout) {
  for (size_t index : readers) {
    const Node& node = graph.nodes[index];
    for (size_t k = 0; k < node.inputs.size(); ++k)
      if (node.inputs[k] == name && packable_layout(graph, node, k) != layout) return false;
  }
  return true;
}

// The bytes of a constant in `layout` (the packers the planner calls on a model not prepacked).
std::vector<std::byte> pack(const TensorInfo& info, VulkanLayout layout, bool fp16) {
  const Shape& s = info.shape;
  if (is_int8_layout(layout)) {
    const int8_t* q = info.data.as<int8_t>().data();
    std::vector<int8_t> packed;
    if (layout == VulkanLayout::conv2d_int8) packed = pack_conv_weights_int8(q, s[0], s[1], 1, s[2], s[3]).weights;
    if (layout == VulkanLayout::depthwise_int8) packed = pack_depthwise_weights_int8(q, s[0], s[2], s[3]);
    if (layout == VulkanLayout::linear_int8) packed = pack_linear_weights_int8(q, s[0], s[1]);
    const auto* bytes = reinterpret_cast<const std::byte*>(packed.data());
    return {bytes, bytes + packed.size()};
  }
  const float* w = info.data.as<float>().data();
  switch (layout) {
    case VulkanLayout::conv2d:
      return encode_floats(pack_conv_weights(w, s[0], s[1], 1, s[2], s[3], false).weights, fp16);
    case VulkanLayout::conv_transpose2d:
      return encode_floats(pack_conv_weights(w, s[1], s[0], 1, s[2], s[3], true).weights, fp16);
    case VulkanLayout::depthwise: return encode_floats(pack_depthwise_weights(w, s[0], s[2], s[3]), fp16);
    case VulkanLayout::linear: return encode_floats(pack_linear_weights(w, s[0], s[1]), fp16);
    case VulkanLayout::channels: return encode_floats(pack_channels(w, s[0]), fp16);
    default: break;
  }
  fail(ExitCode::failure, "vulkan: unknown layout for tensor '{}'", info.name);
}

}  // namespace

bool is_depthwise(const Graph& graph, const Node& node) {
  const int64_t group = attr_int(node, "group");
  const int64_t c = graph.tensor(node.inputs.at(0)).shape.at(1), m = graph.tensor(node.outputs.at(0)).shape.at(1);
  return group == c && m == c && group > 1;
}

std::optional<VulkanLayout> packable_layout(const Graph& graph, const Node& node, size_t input) {
  const bool conv = node.op == "conv2d" || node.op == "conv_transpose2d";
  if (!conv && node.op != "linear") return std::nullopt;
  const bool int8 = int8_weights(graph, node);
  if (input == 2 && int8) return std::nullopt;    // int32, folded with the weight sums at planning
  if (input == 2) return VulkanLayout::channels;  // bias, one vec4 per 4 output channels
  if (input != 1) return std::nullopt;
  if (node.op == "linear") return int8 ? VulkanLayout::linear_int8 : VulkanLayout::linear;
  if (node.op == "conv2d" && is_depthwise(graph, node))
    return int8 ? VulkanLayout::depthwise_int8 : VulkanLayout::depthwise;
  if (int8 && node.op != "conv2d") return std::nullopt;
  // Grouped weights are packed per group (only the input blocks a group reads), a size the
  // layout tag cannot carry: they stay row-major and are packed at planning.
  if (attr_int(node, "group") != 1) return std::nullopt;
  if (node.op == "conv2d") return int8 ? VulkanLayout::conv2d_int8 : VulkanLayout::conv2d;
  return VulkanLayout::conv_transpose2d;
}

std::optional<std::string> check_stored_layout(const Graph& graph, const Node& node, size_t input) {
  const TensorInfo& info = graph.tensor(node.inputs.at(input));
  const std::optional<VulkanStorage> stored = parse_vulkan_layout(info.layout);
  if (stored && info.is_constant() && packable_layout(graph, node, input) == stored->layout) return std::nullopt;
  return fmt::format("tensor '{}' has layout '{}', which vulkan does not read here", info.name, info.layout);
}

PrepackStats prepack_graph(Graph& graph, const PrepackOptions& options) {
  if (options.input_layout != "nchw")
    fail(ExitCode::usage, "--input-layout {}: the vulkan backend takes its inputs as they are (nchw)",
         options.input_layout);
  if (options.precision != "fp32" && options.precision != "fp16")
    fail(ExitCode::usage, "--precision {}: expected fp32 or fp16", options.precision);
  const bool fp16 = options.precision == "fp16";
  PrepackStats stats;
  const auto readers = graph.consumers();
  for (const Node& node : graph.nodes) {
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      const std::string& name = node.inputs[i];
      const std::optional<VulkanLayout> layout = name.empty() ? std::nullopt : packable_layout(graph, node, i);
      if (!layout) continue;
      TensorInfo& info = graph.tensor(name);
      if (!packable_constant(info) || is_graph_output(graph, name)) continue;
      if ((info.dtype == DType::i8) != is_int8_layout(*layout)) continue;
      if (!read_only_as(graph, readers.at(name), name, *layout)) continue;
      const std::vector<std::byte> bytes = pack(info, *layout, fp16);
      info.layout = vulkan_layout_tag({*layout, fp16 && !is_int8_layout(*layout)});
      // The reader will hold the file to this size: a packer and the format must agree.
      if (bytes.size() != stored_byte_size(info.dtype, info.shape, info.layout))
        fail(ExitCode::failure, "vulkan: tensor '{}' packs into {} bytes, layout '{}' says {}", name, bytes.size(),
             info.layout, stored_byte_size(info.dtype, info.shape, info.layout));
      info.data = ConstData::copy_of(bytes.data(), bytes.size());
      ++stats.weights_packed;
    }
  }
  graph.metadata["backend"] = {{"name", "vulkan"}, {"precision", options.precision}};
  graph.metadata["prepack"] = {{"activation_layout", "nc4hw4"},
                               {"input_layout", options.input_layout},
                               {"precision", options.precision},
                               {"weights_reordered", stats.weights_packed}};
  return stats;
}

}  // namespace mt::vulkan
