// recognise_hardswish: x * hardsigmoid(x) (alpha 1/6, beta 0.5) and x * clamp(x + 3, 0, 6) / 6
// in any association of the product become hardswish(x).
#include "lib/ops/registry.h"
#include "lib/passes/passes.h"
#include "lib/passes/patterns.h"

namespace mt::passes {
namespace {

// x when `gate` = hardsigmoid(x) with PyTorch's constants, a private input of the product.
std::optional<std::string> hardsigmoid_input(const Graph& graph, const GraphIndex& index, const std::string& gate,
                                             std::vector<size_t>& nodes) {
  const auto node = private_producer(graph, index, gate, "hardsigmoid");
  if (!node) return std::nullopt;
  const Node& hs = graph.nodes[*node];
  if (!nearly_equal(attr_float(hs, "alpha"), 1.0 / 6.0) || !nearly_equal(attr_float(hs, "beta"), 0.5))
    return std::nullopt;
  nodes.push_back(*node);
  return hs.inputs[0];
}

}  // namespace

void recognise_hardswish(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    const auto product = read_product(g, index, i, 3);
    if (!product || product->factors.size() != 2) return std::nullopt;
    for (size_t side = 0; side < 2; ++side) {
      const std::string& x = product->factors[side];
      const std::string& gate = product->factors[1 - side];
      std::vector<size_t> nodes = product->nodes;
      std::optional<std::string> gate_input;
      if (nearly_equal(product->constant, 1.0))
        gate_input = hardsigmoid_input(g, index, gate, nodes);
      else if (nearly_equal(product->constant, 1.0 / 6.0))
        gate_input = match_relu6_of_x_plus_3(g, index, gate, nodes);
      if (!gate_input || *gate_input != x || !same_type_as(g, g.nodes[i], x)) continue;
      report.record("recognised hardswish", node_names(g, nodes), {g.nodes[i].name});
      return 1 + replace_nodes(g, nodes, replacement_node(g.nodes[i], "hardswish", {x}));
    }
    return std::nullopt;
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
