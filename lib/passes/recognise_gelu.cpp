// recognise_gelu: 0.5 * x * (1 + erf(x / sqrt(2))), with x / sqrt(2) also written x * (1/sqrt(2))
// and the three factors multiplied in any order, becomes gelu(x) (exact form).
#include <cmath>

#include "lib/passes/passes.h"
#include "lib/passes/patterns.h"

namespace mt::passes {
namespace {

// x when `tensor` = 1 + erf(x / sqrt 2), every step private to the pattern.
std::optional<std::string> erf_term_input(const Graph& graph, const GraphIndex& index, const std::string& tensor,
                                          std::vector<size_t>& nodes) {
  const auto add = private_producer(graph, index, tensor, "add");
  if (!add || !has_no_fused_activation(graph.nodes[*add])) return std::nullopt;
  const auto erf_out = operand_besides_scalar(graph, graph.nodes[*add], 1.0);
  if (!erf_out) return std::nullopt;
  const auto erf = private_producer(graph, index, *erf_out, "erf");
  if (!erf) return std::nullopt;
  const std::string& scaled = graph.nodes[*erf].inputs[0];
  std::optional<std::string> x;
  std::optional<size_t> scale;
  if ((scale = private_producer(graph, index, scaled, "div"))) {
    const Node& div = graph.nodes[*scale];
    const auto divisor = scalar_constant(graph, div.inputs[1]);
    if (divisor && nearly_equal(*divisor, std::sqrt(2.0))) x = div.inputs[0];
  } else if ((scale = private_producer(graph, index, scaled, "mul"))) {
    x = operand_besides_scalar(graph, graph.nodes[*scale], 1.0 / std::sqrt(2.0));
  }
  if (!x) return std::nullopt;
  nodes.insert(nodes.end(), {*add, *erf, *scale});
  return x;
}

}  // namespace

void recognise_gelu(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    const auto product = read_product(g, index, i, 3);
    if (!product || product->factors.size() != 2 || !nearly_equal(product->constant, 0.5)) return std::nullopt;
    for (size_t side = 0; side < 2; ++side) {
      const std::string& x = product->factors[side];
      std::vector<size_t> nodes = product->nodes;
      const auto erf_input = erf_term_input(g, index, product->factors[1 - side], nodes);
      if (!erf_input || *erf_input != x || !same_type_as(g, g.nodes[i], x)) continue;
      report.record("recognised gelu", node_names(g, nodes), {g.nodes[i].name});
      return 1 + replace_nodes(g, nodes, replacement_node(g.nodes[i], "gelu", {x}));
    }
    return std::nullopt;
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
