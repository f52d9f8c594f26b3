// Graph surgery shared by the passes: who produces and reads each tensor, constant values,
// fresh names, bypassing a node that computes its input unchanged, and replacing a subgraph.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lib/ir/graph.h"

namespace mt::passes {

// Producers and readers of every tensor of a graph, as of when it was built. Passes rebuild it
// after each rewrite (graphs are small enough that this costs nothing worth optimising).
class GraphIndex {
 public:
  explicit GraphIndex(const Graph& graph);

  // The node producing `tensor`, or nullptr for graph inputs, constants and unknown names.
  const Node* producer(std::string_view tensor) const;
  std::optional<size_t> producer_index(std::string_view tensor) const;
  // Number of node inputs that read `tensor` (a node reading it twice counts twice).
  size_t uses(std::string_view tensor) const;
  bool is_graph_output(std::string_view tensor) const;
  // True when the only thing reading `tensor` is one input of one node: it may be folded into
  // that node without anything else noticing.
  bool single_use(std::string_view tensor) const { return uses(tensor) == 1 && !is_graph_output(tensor); }
  const std::vector<size_t>& consumers(std::string_view tensor) const;

 private:
  const Graph& graph_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<size_t>> consumers_;
  std::unordered_set<std::string> outputs_;
};

// True for a float32 constant tensor.
bool is_f32_constant(const Graph& graph, std::string_view tensor);
// The values of a float32 constant; nullopt if `tensor` is absent, not constant or not float32.
std::optional<std::vector<float>> constant_floats(const Graph& graph, std::string_view tensor);
// The value of a float32 constant with exactly one element (any shape of ones); else nullopt.
std::optional<double> scalar_constant(const Graph& graph, std::string_view tensor);
// True when every element of a float32 constant equals `value`.
bool constant_all_equal(const Graph& graph, std::string_view tensor, float value);

// |a - b| <= 1e-5 * max(1, |b|): for matching constants that exporters round to float32.
bool nearly_equal(double a, double b);

// `base` if no tensor has that name yet, else `base_1`, `base_2`, ...
std::string unique_tensor_name(const Graph& graph, std::string_view base);
// The same for node names.
std::string unique_node_name(const Graph& graph, std::string_view base);

// Adds a float32 constant named after `base` (made unique) and returns its name.
std::string add_f32_constant(Graph& graph, std::string_view base, const Shape& shape, std::span<const float> values);

// Removes node `index`, which computes `out` equal to `in` (same dtype, shape and values), and
// makes readers of `out` read `in`. When `out` is a graph output the producer of `in` is made to
// write `out` instead. Returns false (graph unchanged) when neither is possible: `out` is a graph
// output and `in` is a graph input, a constant, or itself a graph output.
bool bypass_node(Graph& graph, size_t index, const std::string& in, const std::string& out);

// Replaces the nodes at `remove` (any order) by `replacement`, placed where the last of them
// was: every tensor `replacement` reads must be defined before that position. Returns the
// replacement's index.
size_t replace_nodes(Graph& graph, std::vector<size_t> remove, Node replacement);

// Calls `rewrite(graph, index, i)` for each node i in order, `index` describing the current graph.
// A rewrite that changes the graph returns the index of the first node not yet considered (for a
// subgraph replaced in place: one past the replacement); the scan continues there.
using Rewrite = std::function<std::optional<size_t>(Graph& graph, const GraphIndex& index, size_t node)>;
void rewrite_each(Graph& graph, const Rewrite& rewrite);

// Removes the nodes at `remove` (any order).
void erase_nodes(Graph& graph, std::vector<size_t> remove);

// True when the node's fused activation bounds (act_min/act_max) are at their defaults.
bool has_no_fused_activation(const Node& node);

}  // namespace mt::passes
