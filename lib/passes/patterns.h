// Matchers for the primitive-op spellings exporters use, shared by the recognise_* passes:
// products of mul/div trees, relu6(x + 3), erf(x / sqrt 2) + 1, and single-use producers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/passes/graph_edit.h"

namespace mt::passes {

// A value x1 * x2 * ... * constant read off a tree of mul (and div by a constant scalar) nodes
// whose inner results feed only the tree. Constant scalar operands multiply into `constant`.
struct Product {
  std::vector<std::string> factors;  // the non-constant operands
  double constant = 1.0;
  std::vector<size_t> nodes;  // the tree's nodes, root included
};

// The product rooted at node `root` (a mul, or a div by a constant scalar), reading at most
// `max_nodes` nodes deep; nullopt if node `root` is neither.
std::optional<Product> read_product(const Graph& graph, const GraphIndex& index, size_t root, size_t max_nodes = 4);

// The node producing `tensor` if it is an `op` node whose output only `uses_allowed` inputs read
// (and is not a graph output); else nullopt.
std::optional<size_t> private_producer(const Graph& graph, const GraphIndex& index, const std::string& tensor,
                                       std::string_view op, size_t uses_allowed = 1);

// The other operand of a binary node when one of its two operands is a constant scalar close to
// `value` (nearly_equal); nullopt otherwise.
std::optional<std::string> operand_besides_scalar(const Graph& graph, const Node& node, double value);

// x for `tensor` = clamp(add(x, 3), 0, 6), or add(x, 3) with act_min 0 and act_max 6 (the form
// after fuse_activation); the nodes involved are appended to `nodes`.
std::optional<std::string> match_relu6_of_x_plus_3(const Graph& graph, const GraphIndex& index, const std::string& tensor,
                                                   std::vector<size_t>& nodes);

// True when the output of node `root` has the dtype and shape of `x`, so that replacing the
// subgraph by an element-wise op on x keeps every reader's view (no hidden broadcast).
bool same_type_as(const Graph& graph, const Node& root, const std::string& x);

// Names of the nodes at `indices`, in graph order (for reports).
std::vector<std::string> node_names(const Graph& graph, std::vector<size_t> indices);

// Builds the node that replaces a recognised subgraph: named after the subgraph's last node, so
// the report and later passes can follow it.
Node replacement_node(const Node& root, std::string op, std::vector<std::string> inputs, Attributes attrs = {});

}  // namespace mt::passes
