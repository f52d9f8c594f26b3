#include "lib/passes/patterns.h"

#include <algorithm>

#include "lib/ops/registry.h"

namespace mt::passes {
namespace {

void collect(const Graph& graph, const GraphIndex& index, const std::string& tensor, size_t max_nodes, Product& product) {
  if (auto value = scalar_constant(graph, tensor)) {
    product.constant *= *value;
    return;
  }
  if (product.nodes.size() < max_nodes) {
    if (auto mul = private_producer(graph, index, tensor, "mul")) {
      product.nodes.push_back(*mul);
      for (const auto& in : graph.nodes[*mul].inputs) collect(graph, index, in, max_nodes, product);
      return;
    }
    if (auto div = private_producer(graph, index, tensor, "div")) {
      const Node& node = graph.nodes[*div];
      const auto divisor = scalar_constant(graph, node.inputs[1]);
      if (divisor && *divisor != 0.0) {
        product.nodes.push_back(*div);
        product.constant /= *divisor;
        collect(graph, index, node.inputs[0], max_nodes, product);
        return;
      }
    }
  }
  product.factors.push_back(tensor);
}

}  // namespace

std::optional<Product> read_product(const Graph& graph, const GraphIndex& index, size_t root, size_t max_nodes) {
  const Node& node = graph.nodes[root];
  if (node.inputs.size() != 2 || node.outputs.size() != 1) return std::nullopt;
  if (graph.tensor(node.outputs[0]).dtype != DType::f32) return std::nullopt;
  Product product;
  product.nodes.push_back(root);
  if (node.op == "mul") {
    collect(graph, index, node.inputs[0], max_nodes, product);
    collect(graph, index, node.inputs[1], max_nodes, product);
  } else if (node.op == "div") {
    const auto divisor = scalar_constant(graph, node.inputs[1]);
    if (!divisor || *divisor == 0.0) return std::nullopt;
    product.constant /= *divisor;
    collect(graph, index, node.inputs[0], max_nodes, product);
  } else {
    return std::nullopt;
  }
  return product;
}

std::optional<size_t> private_producer(const Graph& graph, const GraphIndex& index, const std::string& tensor,
                                       std::string_view op, size_t uses_allowed) {
  const auto producer = index.producer_index(tensor);
  if (!producer || graph.nodes[*producer].op != op || graph.nodes[*producer].outputs.size() != 1) return std::nullopt;
  if (index.uses(tensor) != uses_allowed || index.is_graph_output(tensor)) return std::nullopt;
  return producer;
}

std::optional<std::string> operand_besides_scalar(const Graph& graph, const Node& node, double value) {
  if (node.inputs.size() != 2) return std::nullopt;
  for (size_t side = 0; side < 2; ++side) {
    const auto constant = scalar_constant(graph, node.inputs[side]);
    if (constant && nearly_equal(*constant, value) && !scalar_constant(graph, node.inputs[1 - side]))
      return node.inputs[1 - side];
  }
  return std::nullopt;
}

std::optional<std::string> match_relu6_of_x_plus_3(const Graph& graph, const GraphIndex& index, const std::string& tensor,
                                                   std::vector<size_t>& nodes) {
  auto is_relu6 = [](double lo, double hi) { return lo == 0.0 && hi == 6.0; };
  std::vector<size_t> found;
  std::string sum = tensor;
  if (auto clamp = private_producer(graph, index, tensor, "clamp")) {
    const Node& node = graph.nodes[*clamp];
    if (!is_relu6(attr_float(node, "min"), attr_float(node, "max"))) return std::nullopt;
    found.push_back(*clamp);
    sum = node.inputs[0];
  }
  const auto add = private_producer(graph, index, sum, "add");
  if (!add) return std::nullopt;
  const Node& node = graph.nodes[*add];
  const bool fused = !has_no_fused_activation(node);
  if (found.empty() != fused) return std::nullopt;  // exactly one of the two spellings of relu6
  if (fused && !is_relu6(attr_float(node, "act_min"), attr_float(node, "act_max"))) return std::nullopt;
  auto x = operand_besides_scalar(graph, node, 3.0);
  if (!x) return std::nullopt;
  found.push_back(*add);
  nodes.insert(nodes.end(), found.begin(), found.end());
  return x;
}

bool same_type_as(const Graph& graph, const Node& root, const std::string& x) {
  const TensorInfo& out = graph.tensor(root.outputs[0]);
  const TensorInfo& in = graph.tensor(x);
  return out.dtype == DType::f32 && in.dtype == DType::f32 && out.shape == in.shape && !in.quant && !out.quant;
}

std::vector<std::string> node_names(const Graph& graph, std::vector<size_t> indices) {
  std::sort(indices.begin(), indices.end());
  std::vector<std::string> names;
  for (size_t i : indices) names.push_back(graph.nodes[i].name);
  return names;
}

Node replacement_node(const Node& root, std::string op, std::vector<std::string> inputs, Attributes attrs) {
  return Node{.name = root.name, .op = std::move(op), .inputs = std::move(inputs), .outputs = root.outputs,
              .attrs = std::move(attrs)};
}

}  // namespace mt::passes
