// recognise_linear: matmul(x, B) with a constant 2-D B, plus an optional following add of a 1-D
// constant bias, becomes linear(x, W = B^T, bias): the fully connected op the backends run best.
#include "lib/passes/passes.h"
#include "lib/passes/patterns.h"

namespace mt::passes {
namespace {

// The bias of an add that is the matmul output's only reader: a float32 constant of shape [N].
std::optional<std::pair<size_t, std::string>> bias_add(const Graph& graph, const GraphIndex& index, const Node& matmul,
                                                       int64_t n) {
  const std::string& out = matmul.outputs[0];
  if (!index.single_use(out)) return std::nullopt;
  const size_t add_index = index.consumers(out)[0];
  const Node& add = graph.nodes[add_index];
  if (add.op != "add" || add.inputs.size() != 2) return std::nullopt;
  const std::string& bias = add.inputs[0] == out ? add.inputs[1] : add.inputs[0];
  if (bias == out || !is_f32_constant(graph, bias) || graph.tensor(bias).shape != Shape{n}) return std::nullopt;
  if (graph.tensor(add.outputs[0]).shape != graph.tensor(out).shape) return std::nullopt;
  return std::pair{add_index, bias};
}

}  // namespace

void recognise_linear(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    const Node& matmul = g.nodes[i];
    if (matmul.op != "matmul" || matmul.inputs.size() != 2) return std::nullopt;
    const std::string& x = matmul.inputs[0];
    const std::string& b = matmul.inputs[1];
    // B must be read by this matmul only: its transposed copy then replaces it instead of
    // doubling the weights.
    const auto weights = constant_floats(g, b);
    if (!weights || index.uses(b) != 1 || index.is_graph_output(b)) return std::nullopt;
    const Shape& b_shape = g.tensor(b).shape;
    const TensorInfo& x_info = g.tensor(x);
    if (b_shape.size() != 2 || x_info.shape.size() < 2 || x_info.dtype != DType::f32) return std::nullopt;
    const int64_t k = b_shape[0], n = b_shape[1];
    std::vector<float> transposed(weights->size());
    for (int64_t r = 0; r < k; ++r)
      for (int64_t c = 0; c < n; ++c) transposed[c * k + r] = (*weights)[r * n + c];
    const std::string w = add_f32_constant(g, b + "_t", {n, k}, transposed);

    std::vector<size_t> nodes = {i};
    std::vector<std::string> inputs = {x, w};
    Attributes attrs;
    const Node* root = &matmul;
    if (auto add = bias_add(g, index, matmul, n)) {
      nodes.push_back(add->first);
      inputs.push_back(add->second);
      root = &g.nodes[add->first];
      // An add that already carries a fused clamp hands it on.
      for (const char* bound : {"act_min", "act_max"})
        if (auto it = root->attrs.find(bound); it != root->attrs.end()) attrs[bound] = it->second;
    }
    report.record(nodes.size() == 2 ? "recognised linear (matmul + bias add)" : "recognised linear (matmul)",
                  node_names(g, nodes), {root->name});
    replace_nodes(g, nodes, replacement_node(*root, "linear", inputs, attrs));
    // With a bias add the linear sits where the add was: resume at the node after the matmul's slot.
    return nodes.size() == 2 ? i : i + 1;
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
