// fuse_activation: relu and clamp after conv2d, conv_transpose2d, linear or add become the
// producer's act_min/act_max, the bounds the cpu kernels apply as they write each result.
#include <algorithm>
#include <limits>

#include "lib/ops/registry.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

bool can_carry_activation(const Graph& graph, const Node& node) {
  if (node.op != "conv2d" && node.op != "conv_transpose2d" && node.op != "linear" && node.op != "add") return false;
  return node.outputs.size() == 1 && graph.tensor(node.outputs[0]).dtype == DType::f32;
}

// The [min, max] an activation node clamps to, if it is a clamp-like one.
std::optional<std::pair<double, double>> clamp_bounds(const Node& node) {
  if (node.op == "relu") return std::pair{0.0, kFloatMax};
  if (node.op == "clamp") return std::pair{attr_float(node, "min"), attr_float(node, "max")};
  return std::nullopt;
}

}  // namespace

void fuse_activation(Graph& graph, PassReport& report) {
  for (size_t i = 0; i < graph.nodes.size();) {
    const Node& activation = graph.nodes[i];
    const auto bounds = clamp_bounds(activation);
    if (!bounds || activation.inputs.size() != 1 || activation.inputs[0].empty()) {
      ++i;
      continue;
    }
    const GraphIndex index(graph);
    const auto producer_index = index.producer_index(activation.inputs[0]);
    if (!producer_index || !index.single_use(activation.inputs[0]) ||
        !can_carry_activation(graph, graph.nodes[*producer_index])) {
      ++i;
      continue;
    }
    Node& producer = graph.nodes[*producer_index];
    // clamp(clamp(x, a, b), c, d) = clamp(x, max(a, c), min(b, d)) when the ranges overlap; when
    // they do not the result is a constant, which is not worth a special case.
    const double lo = std::max(attr_float(producer, "act_min"), bounds->first);
    const double hi = std::min(attr_float(producer, "act_max"), bounds->second);
    if (lo > hi) {
      ++i;
      continue;
    }
    producer.attrs["act_min"] = lo;
    producer.attrs["act_max"] = hi;
    // The producer now writes the activation's output; its old output tensor disappears.
    producer.outputs[0] = activation.outputs[0];
    report.record("fused " + activation.op + " into " + producer.op, {producer.name, activation.name}, {producer.name});
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(i));
  }
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
