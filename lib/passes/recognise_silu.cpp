// recognise_silu: x * sigmoid(x) (either operand order) becomes silu(x).
#include "lib/passes/passes.h"
#include "lib/passes/patterns.h"

namespace mt::passes {

void recognise_silu(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    const auto product = read_product(g, index, i, 1);
    if (!product || product->factors.size() != 2 || !nearly_equal(product->constant, 1.0)) return std::nullopt;
    for (size_t side = 0; side < 2; ++side) {
      const std::string& x = product->factors[side];
      const auto sigmoid = private_producer(g, index, product->factors[1 - side], "sigmoid");
      if (!sigmoid || g.nodes[*sigmoid].inputs[0] != x || !same_type_as(g, g.nodes[i], x)) continue;
      std::vector<size_t> nodes = product->nodes;
      nodes.push_back(*sigmoid);
      report.record("recognised silu", node_names(g, nodes), {g.nodes[i].name});
      return 1 + replace_nodes(g, nodes, replacement_node(g.nodes[i], "silu", {x}));
    }
    return std::nullopt;
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
