// fuse_activation: relu and clamp after an op that carries a fused clamp (the op table's clamp
// column: conv2d, conv_transpose2d, linear, add) become the producer's act_min/act_max, the bounds
// the kernels apply as they write each result; after another relu or clamp they merge with it into
// one clamp.
#include <algorithm>
#include <limits>

#include "lib/ops/op_table.h"
#include "lib/ops/registry.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

// The [min, max] an activation node clamps to, if it is a clamp-like one.
std::optional<std::pair<double, double>> clamp_bounds(const Node& node) {
  if (node.op == "relu") return std::pair{0.0, kFloatMax};
  if (node.op == "clamp") return std::pair{attr_float(node, "min"), attr_float(node, "max")};
  return std::nullopt;
}

bool has_act_attributes(const Node& node) {
  const OpInfo* info = find_op_info(node.op);
  return info != nullptr && info->clamp;
}

bool can_carry_activation(const Graph& graph, const Node& node) {
  if (!has_act_attributes(node) && !clamp_bounds(node)) return false;
  return node.outputs.size() == 1 && graph.tensor(node.outputs[0]).dtype == DType::f32;
}

// The bounds a producer already applies: act_min/act_max, or its own clamp.
std::pair<double, double> current_bounds(const Node& node) {
  if (auto bounds = clamp_bounds(node)) return *bounds;
  return {attr_float(node, "act_min"), attr_float(node, "act_max")};
}

}  // namespace

void fuse_activation(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    const Node& activation = g.nodes[i];
    const auto bounds = clamp_bounds(activation);
    if (!bounds || activation.inputs.size() != 1 || activation.inputs[0].empty()) return std::nullopt;
    const auto producer_index = index.producer_index(activation.inputs[0]);
    if (!producer_index || !index.single_use(activation.inputs[0]) ||
        !can_carry_activation(g, g.nodes[*producer_index]))
      return std::nullopt;
    Node& producer = g.nodes[*producer_index];
    // clamp(clamp(x, a, b), c, d) = clamp(x, max(a, c), min(b, d)) when the ranges overlap; when
    // they do not the result is a constant, which is not worth a special case.
    const auto [old_lo, old_hi] = current_bounds(producer);
    const double lo = std::max(old_lo, bounds->first);
    const double hi = std::min(old_hi, bounds->second);
    if (lo > hi) return std::nullopt;
    const std::string producer_op = producer.op;
    if (has_act_attributes(producer)) {
      producer.attrs["act_min"] = lo;
      producer.attrs["act_max"] = hi;
    } else {
      producer.op = "clamp";
      producer.attrs = {{"min", lo}, {"max", hi}};
    }
    // The producer now writes the activation's output; its old output tensor disappears.
    producer.outputs[0] = activation.outputs[0];
    report.record((has_act_attributes(producer) ? "fused " : "merged ") + activation.op + " into " + producer_op,
                  {producer.name, activation.name}, {producer.name});
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    return i;  // the node after the activation now sits at its index
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
