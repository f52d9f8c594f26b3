// remove_identities: drops nodes whose output equals one of their inputs element for element.
#include <optional>

#include "lib/ops/registry.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

bool same_type(const TensorInfo& a, const TensorInfo& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.layout == b.layout && a.quant == b.quant;
}

// Transposing moves no element when the axes longer than 1 keep their relative order.
bool transpose_moves_nothing(const Node& node, const Shape& in_shape) {
  const auto& perm = attr_ints(node, "perm");
  if (perm.empty()) return in_shape.size() <= 1;
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (axis < 0 || axis >= static_cast<int64_t>(in_shape.size())) return false;
    if (in_shape[axis] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

bool all_zero(const std::vector<int64_t>& values) {
  return std::all_of(values.begin(), values.end(), [](int64_t v) { return v == 0; });
}

// The input a node passes through unchanged, if it is one of the no-ops this pass knows.
std::optional<std::string> passed_through(const Graph& graph, const Node& node) {
  if (node.inputs.empty() || node.outputs.size() != 1 || node.inputs[0].empty()) return std::nullopt;
  const std::string& x = node.inputs[0];
  const TensorInfo& in = graph.tensor(x);
  const TensorInfo& out = graph.tensor(node.outputs[0]);
  const std::string& op = node.op;
  // Element-wise ops with a constant operand: identity when that operand is 0 (or 1) and does
  // not broadcast the other one to a bigger shape.
  auto neutral_operand = [&](float neutral, bool either_side) -> std::optional<std::string> {
    if (node.inputs.size() != 2) return std::nullopt;
    const std::string& a = node.inputs[0];
    const std::string& b = node.inputs[1];
    if (constant_all_equal(graph, b, neutral) && same_type(graph.tensor(a), out)) return a;
    if (either_side && constant_all_equal(graph, a, neutral) && same_type(graph.tensor(b), out)) return b;
    return std::nullopt;
  };
  if (op == "add") return has_no_fused_activation(node) ? neutral_operand(0.0f, true) : std::nullopt;
  if (op == "sub") return neutral_operand(0.0f, false);
  if (op == "mul") return neutral_operand(1.0f, true);
  if (op == "div") return neutral_operand(1.0f, false);

  if (!same_type(in, out)) return std::nullopt;
  bool identity = false;
  if (op == "identity" || op == "reshape" || op == "flatten" || op == "squeeze" || op == "unsqueeze" ||
      op == "expand") {
    identity = true;
  } else if (op == "transpose") {
    identity = transpose_moves_nothing(node, in.shape);
  } else if (op == "cast") {
    identity = true;  // same_type: the target dtype is the input's
  } else if (op == "concat") {
    identity = node.inputs.size() == 1;
  } else if (op == "slice") {
    // Same shape with positive steps can only mean starting at 0 and taking every element.
    const auto& steps = attr_ints(node, "steps");
    identity = std::all_of(steps.begin(), steps.end(), [](int64_t s) { return s > 0; });
  } else if (op == "pad") {
    identity = all_zero(attr_ints(node, "pads"));
  } else if (op == "resize") {
    // Every coordinate transform maps output index i to input i at scale 1, except
    // tf_half_pixel_for_nn (i + 0.5, which rounds up under some nearest modes).
    const auto& scales = attr_floats(node, "scales");
    identity = std::all_of(scales.begin(), scales.end(), [](double s) { return s == 1.0; }) &&
               attr_string(node, "coordinate_transformation_mode") != "tf_half_pixel_for_nn";
  }
  if (!identity) return std::nullopt;
  return x;
}

}  // namespace

void remove_identities(Graph& graph, PassReport& report) {
  for (size_t i = 0; i < graph.nodes.size();) {
    const Node& node = graph.nodes[i];
    auto input = passed_through(graph, node);
    if (!input) {
      ++i;
      continue;
    }
    const std::string name = node.name, op = node.op, out = node.outputs[0];
    if (bypass_node(graph, i, *input, out)) {
      report.record("removed no-op " + op, {name}, {});
    } else {
      ++i;  // a graph input or constant returned as a graph output: the node must stay
    }
  }
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
