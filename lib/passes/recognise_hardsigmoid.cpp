// recognise_hardsigmoid: clamp(x + 3, 0, 6) / 6 (or * 1/6) becomes hardsigmoid(x) with
// alpha 1/6 and beta 0.5, PyTorch's definition.
#include "lib/passes/passes.h"
#include "lib/passes/patterns.h"

namespace mt::passes {

void recognise_hardsigmoid(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    const auto product = read_product(g, index, i, 1);
    if (!product || product->factors.size() != 1 || !nearly_equal(product->constant, 1.0 / 6.0)) return std::nullopt;
    std::vector<size_t> nodes = product->nodes;
    const auto x = match_relu6_of_x_plus_3(g, index, product->factors[0], nodes);
    if (!x || !same_type_as(g, g.nodes[i], *x)) return std::nullopt;
    report.record("recognised hardsigmoid", node_names(g, nodes), {g.nodes[i].name});
    return 1 + replace_nodes(g, nodes,
                         replacement_node(g.nodes[i], "hardsigmoid", {*x}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}}));
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
