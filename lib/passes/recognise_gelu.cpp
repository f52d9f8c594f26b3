// recognise_gelu: 0.5 * x * (1 + erf(x / sqrt(2))), with x / sqrt(2) also written x * (1/sqrt(2)),
// becomes gelu(x); 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) becomes gelu(x) with
// approximate "tanh". The three factors may be multiplied in any order.
#include <cmath>
#include <numbers>

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

// x when `tensor` = x^3, as pow(x, 3) or x * (x * x) in either order.
std::optional<std::string> cube_input(const Graph& graph, const GraphIndex& index, const std::string& tensor,
                                      std::vector<size_t>& nodes) {
  if (auto pow = private_producer(graph, index, tensor, "pow")) {
    const Node& node = graph.nodes[*pow];
    const auto exponent = scalar_constant(graph, node.inputs[1]);
    if (!exponent || !nearly_equal(*exponent, 3.0)) return std::nullopt;
    nodes.push_back(*pow);
    return node.inputs[0];
  }
  const auto outer = private_producer(graph, index, tensor, "mul");
  if (!outer) return std::nullopt;
  const Node& node = graph.nodes[*outer];
  for (size_t side = 0; side < 2; ++side) {
    const auto square = private_producer(graph, index, node.inputs[side], "mul");
    if (!square) continue;
    const Node& sq = graph.nodes[*square];
    const std::string& x = node.inputs[1 - side];
    if (sq.inputs[0] == x && sq.inputs[1] == x) {
      nodes.insert(nodes.end(), {*outer, *square});
      return x;
    }
  }
  return std::nullopt;
}

// x when `tensor` = 1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)), every step private to the pattern.
std::optional<std::string> tanh_term_input(const Graph& graph, const GraphIndex& index, const std::string& tensor,
                                           std::vector<size_t>& nodes) {
  const auto add = private_producer(graph, index, tensor, "add");
  if (!add || !has_no_fused_activation(graph.nodes[*add])) return std::nullopt;
  const auto tanh_out = operand_besides_scalar(graph, graph.nodes[*add], 1.0);
  if (!tanh_out) return std::nullopt;
  const auto tanh = private_producer(graph, index, *tanh_out, "tanh");
  if (!tanh) return std::nullopt;
  const auto scale = private_producer(graph, index, graph.nodes[*tanh].inputs[0], "mul");
  if (!scale) return std::nullopt;
  const auto inner = operand_besides_scalar(graph, graph.nodes[*scale], std::sqrt(2.0 / std::numbers::pi));
  if (!inner) return std::nullopt;
  const auto sum = private_producer(graph, index, *inner, "add");
  if (!sum || !has_no_fused_activation(graph.nodes[*sum])) return std::nullopt;
  const Node& sum_node = graph.nodes[*sum];
  std::vector<size_t> found = {*add, *tanh, *scale, *sum};
  for (size_t side = 0; side < 2; ++side) {
    const std::string& x = sum_node.inputs[side];
    const auto term = private_producer(graph, index, sum_node.inputs[1 - side], "mul");
    if (!term) continue;
    const auto cube = operand_besides_scalar(graph, graph.nodes[*term], 0.044715);
    if (!cube) continue;
    std::vector<size_t> cube_nodes;
    const auto base = cube_input(graph, index, *cube, cube_nodes);
    if (!base || *base != x) continue;
    nodes.insert(nodes.end(), found.begin(), found.end());
    nodes.push_back(*term);
    nodes.insert(nodes.end(), cube_nodes.begin(), cube_nodes.end());
    return x;
  }
  return std::nullopt;
}

}  // namespace

void recognise_gelu(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    const auto product = read_product(g, index, i, 3);
    if (!product || product->factors.size() != 2 || !nearly_equal(product->constant, 0.5)) return std::nullopt;
    for (size_t side = 0; side < 2; ++side) {
      const std::string& x = product->factors[side];
      if (!same_type_as(g, g.nodes[i], x)) continue;
      std::vector<size_t> nodes = product->nodes;
      const auto erf_input = erf_term_input(g, index, product->factors[1 - side], nodes);
      if (erf_input && *erf_input == x) {
        report.record("recognised gelu", node_names(g, nodes), {g.nodes[i].name});
        return 1 + replace_nodes(g, nodes, replacement_node(g.nodes[i], "gelu", {x}));
      }
      nodes = product->nodes;
      const auto tanh_input = tanh_term_input(g, index, product->factors[1 - side], nodes);
      if (tanh_input && *tanh_input == x) {
        report.record("recognised gelu (tanh approximation)", node_names(g, nodes), {g.nodes[i].name});
        return 1 + replace_nodes(g, nodes,
                                 replacement_node(g.nodes[i], "gelu", {x}, {{"approximate", std::string("tanh")}}));
      }
    }
    return std::nullopt;
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
