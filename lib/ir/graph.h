// The graph IR every tool works on: named tensors, nodes in topological order, graph inputs
// and outputs, and free-form metadata (provenance, target backend).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "lib/ir/attribute.h"
#include "lib/ir/tensor.h"

namespace mt {

struct Node {
  std::string name;
  std::string op;                    // a name in the op registry
  std::vector<std::string> inputs;   // tensor names; "" marks an absent optional input
  std::vector<std::string> outputs;  // tensor names
  Attributes attrs;
};

class Graph {
 public:
  std::vector<std::string> inputs;   // runtime inputs, in order
  std::vector<std::string> outputs;  // results, in order
  std::vector<Node> nodes;           // topological order (validate() checks it)
  std::map<std::string, TensorInfo, std::less<>> tensors;  // every tensor, by name
  nlohmann::json metadata = nlohmann::json::object();

  bool has_tensor(std::string_view name) const { return tensors.find(name) != tensors.end(); }
  // Throws Error(invalid_input) naming the tensor if it does not exist.
  const TensorInfo& tensor(std::string_view name) const;
  TensorInfo& tensor(std::string_view name);

  // Adds a tensor; throws if the name is taken.
  TensorInfo& add_tensor(TensorInfo info);

  // Structural checks: names unique and defined before use, one producer per tensor, nodes
  // in topological order (so no cycles), graph outputs produced, ops registered with
  // attributes of the right types, every tensor's dtype/shape equal to what the op
  // registry infers, and tensors with a run-time row count read only by row-wise ops, their count
  // a graph output where they are (lib/ops/valid_rows.h). Throws Error(invalid_input) naming the
  // node or tensor.
  void validate() const;

  // Reorders nodes topologically (stable); throws Error(invalid_input) naming a node on a cycle.
  void sort_topologically();

  // Runs the registry's shape inference over all nodes in order, (re)setting the dtype and
  // shape of every node output.
  void infer_shapes();

  // Removes tensors that no node, input or output refers to.
  void remove_unused_tensors();

  // Map from tensor name to the index of the node producing it.
  std::unordered_map<std::string, size_t> producers() const;
  // Map from tensor name to the indices of nodes consuming it.
  std::unordered_map<std::string, std::vector<size_t>> consumers() const;

  // Appends {"tool", "version", "args"} to metadata["provenance"].
  void add_provenance(const std::string& tool, const std::vector<std::string>& args);
};

}  // namespace mt
