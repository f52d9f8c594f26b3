#include "kernels/cpu/ops/conv_fusion.h"

#include "kernels/cpu/plan/layout.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"

namespace mt::cpu {
namespace {

std::optional<Activation> activation_of(const std::string& op) {
  if (op == "hardswish") return Activation::hardswish;
  if (op == "silu") return Activation::silu;
  return std::nullopt;
}

}  // namespace

ConvFusion conv_fusion(const NodeContext& c) {
  ConvFusion fusion;
  if (!c.conv_fusion()) return fusion;
  const Graph& graph = c.graph();
  std::string last = c.node().outputs[0];
  std::optional<size_t> next = c.sole_consumer_of(last);
  if (next) {
    const Node& node = graph.nodes[*next];
    const std::optional<Activation> activation = activation_of(node.op);
    if (activation && node.inputs.size() == 1 && !check_float(graph, node)) {
      fusion.activation_node = next;
      fusion.activation = *activation;
      last = node.outputs[0];
      next = c.sole_consumer_of(last);
    }
  }
  if (!next) return fusion;
  const Node& add = graph.nodes[*next];
  if (add.op != "add" || add.inputs.size() != 2 || check_binary(graph, add)) return fusion;
  const std::string& residual = add.inputs[0] == last ? add.inputs[1] : add.inputs[0];
  const Shape& shape = graph.tensor(last).shape;
  // Same shape on both sides (no broadcast), float32 throughout, computed before the conv runs.
  if (graph.tensor(residual).shape != shape || graph.tensor(add.outputs[0]).shape != shape ||
      graph.tensor(residual).dtype != DType::f32 || !c.available(residual))
    return fusion;
  fusion.add_node = next;
  fusion.residual = residual;
  fusion.residual_low = attr_f32(add, "act_min");
  fusion.residual_high = attr_f32(add, "act_max");
  return fusion;
}

FusedValues fused_values(NodeContext& c, const ConvFusion& fusion) {
  FusedValues values;
  if (fusion.add_node) values.residual = c.tensor(fusion.residual, nhwc_layout());
  if (fusion.add_node) {
    if (fusion.activation_node) c.fuse_through(*fusion.activation_node);
    values.y = c.fused_output(*fusion.add_node, 0, nhwc_layout());
  } else if (fusion.activation_node) {
    values.y = c.fused_output(*fusion.activation_node, 0, nhwc_layout());
  } else {
    values.y = c.output(0, nhwc_layout());
  }
  return values;
}

Epilogue epilogue_of(float low, float high, const ConvFusion& fusion) {
  Epilogue e{.low = low, .high = high, .activation = fusion.activation};
  if (fusion.add_node) {
    e.residual_low = fusion.residual_low;
    e.residual_high = fusion.residual_high;
  }
  return e;
}

}  // namespace mt::cpu
