#include "lib/ir/graph.h"

#include <queue>
#include <set>
#include <unordered_set>

#include "lib/core/error.h"
#include "lib/core/version.h"
#include "lib/ops/registry.h"
#include "lib/ops/valid_rows.h"

namespace mt {

const TensorInfo& Graph::tensor(std::string_view name) const {
  auto it = tensors.find(name);
  if (it == tensors.end()) invalid_input("tensor '{}' is not defined", name);
  return it->second;
}

TensorInfo& Graph::tensor(std::string_view name) {
  auto it = tensors.find(name);
  if (it == tensors.end()) invalid_input("tensor '{}' is not defined", name);
  return it->second;
}

TensorInfo& Graph::add_tensor(TensorInfo info) {
  auto name = info.name;
  auto [it, inserted] = tensors.emplace(name, std::move(info));
  if (!inserted) invalid_input("tensor '{}' is defined twice", name);
  return it->second;
}

std::unordered_map<std::string, size_t> Graph::producers() const {
  std::unordered_map<std::string, size_t> result;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& out : nodes[i].outputs) result.emplace(out, i);
  return result;
}

std::unordered_map<std::string, std::vector<size_t>> Graph::consumers() const {
  std::unordered_map<std::string, std::vector<size_t>> result;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& in : nodes[i].inputs)
      if (!in.empty()) result[in].push_back(i);
  return result;
}

void Graph::sort_topologically() {
  // Kahn's algorithm, always taking the lowest original index that is ready, so an already
  // sorted graph keeps its order.
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& out : nodes[i].outputs)
      if (!producer.emplace(out, i).second) invalid_input("tensor '{}' is produced by two nodes", out);
  std::vector<size_t> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> users(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& in : nodes[i].inputs) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end()) continue;
      ++pending[i];
      users[it->second].push_back(i);
    }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    sorted.push_back(std::move(nodes[i]));
    for (size_t user : users[i])
      if (--pending[user] == 0) ready.push(user);
  }
  if (sorted.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] != 0) invalid_input("node '{}' ({}) is on a cycle", nodes[i].name, nodes[i].op);
  }
  nodes = std::move(sorted);
}

void Graph::infer_shapes() {
  std::vector<const TensorInfo*> inputs;
  for (const auto& node : nodes) {
    inputs.clear();
    for (const auto& in : node.inputs) inputs.push_back(in.empty() ? nullptr : &tensor(in));
    auto types = infer_node(node, inputs);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      auto it = tensors.find(node.outputs[i]);
      if (it == tensors.end()) it = tensors.emplace(node.outputs[i], TensorInfo{.name = node.outputs[i]}).first;
      it->second.dtype = types[i].dtype;
      it->second.shape = std::move(types[i].shape);
    }
  }
}

void Graph::validate() const {
  std::unordered_set<std::string> defined;
  std::unordered_set<std::string> node_names;
  for (const auto& name : inputs) {
    const TensorInfo& info = tensor(name);
    if (info.is_constant()) invalid_input("graph input '{}' is a constant", name);
    if (!defined.insert(name).second) invalid_input("graph input '{}' is listed twice", name);
  }
  for (const auto& [name, info] : tensors)
    if (info.is_constant()) defined.insert(name);

  std::vector<const TensorInfo*> input_infos;
  for (const auto& node : nodes) {
    if (node.name.empty()) invalid_input("a node of op '{}' has no name", node.op);
    if (!node_names.insert(node.name).second) invalid_input("node name '{}' is used twice", node.name);
    input_infos.clear();
    for (const auto& in : node.inputs) {
      if (in.empty()) {
        input_infos.push_back(nullptr);
        continue;
      }
      if (!defined.count(in)) {
        if (has_tensor(in) && producers().count(in))
          invalid_input("node '{}' ({}) uses tensor '{}' before it is produced (nodes out of order or a cycle)",
                        node.name, node.op, in);
        invalid_input("node '{}' ({}) uses tensor '{}', which is not defined", node.name, node.op, in);
      }
      input_infos.push_back(&tensor(in));
    }
    auto types = infer_node(node, input_infos);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const auto& out = node.outputs[i];
      if (out.empty()) invalid_input("node '{}' ({}) has an unnamed output", node.name, node.op);
      if (!defined.insert(out).second)
        invalid_input("tensor '{}' is produced by node '{}' but is already defined", out, node.name);
      const TensorInfo& info = tensor(out);
      if (info.is_constant()) invalid_input("tensor '{}' is both a constant and the output of node '{}'", out, node.name);
      if (info.dtype != types[i].dtype || info.shape != types[i].shape)
        invalid_input("tensor '{}' is declared {} {} but node '{}' ({}) produces {} {}", out, dtype_name(info.dtype),
                      shape_str(info.shape), node.name, node.op, dtype_name(types[i].dtype), shape_str(types[i].shape));
    }
  }
  if (outputs.empty()) invalid_input("the graph has no outputs");
  std::set<std::string> seen_outputs;
  for (const auto& name : outputs) {
    if (!defined.count(name)) invalid_input("graph output '{}' is not produced by any node", name);
    if (!seen_outputs.insert(name).second) invalid_input("graph output '{}' is listed twice", name);
  }
  valid_row_counts(*this, ExitCode::invalid_input);
}

void Graph::remove_unused_tensors() {
  std::unordered_set<std::string> used(inputs.begin(), inputs.end());
  used.insert(outputs.begin(), outputs.end());
  for (const auto& node : nodes) {
    used.insert(node.inputs.begin(), node.inputs.end());
    used.insert(node.outputs.begin(), node.outputs.end());
  }
  std::erase_if(tensors, [&](const auto& entry) { return !used.count(entry.first); });
}

void Graph::add_provenance(const std::string& tool, const std::vector<std::string>& args) {
  auto& list = metadata["provenance"];
  if (!list.is_array()) list = nlohmann::json::array();
  list.push_back({{"tool", tool}, {"version", version_string()}, {"args", args}});
}

}  // namespace mt
