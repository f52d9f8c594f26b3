#include "lib/passes/graph_edit.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "lib/core/error.h"

namespace mt::passes {

GraphIndex::GraphIndex(const Graph& graph) : graph_(graph), outputs_(graph.outputs.begin(), graph.outputs.end()) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& out : graph.nodes[i].outputs) producer_.emplace(out, i);
    for (const auto& in : graph.nodes[i].inputs)
      if (!in.empty()) consumers_[in].push_back(i);
  }
}

const Node* GraphIndex::producer(std::string_view tensor) const {
  auto index = producer_index(tensor);
  return index ? &graph_.nodes[*index] : nullptr;
}

std::optional<size_t> GraphIndex::producer_index(std::string_view tensor) const {
  auto it = producer_.find(std::string(tensor));
  if (it == producer_.end()) return std::nullopt;
  return it->second;
}

size_t GraphIndex::uses(std::string_view tensor) const { return consumers(tensor).size(); }

bool GraphIndex::is_graph_output(std::string_view tensor) const { return outputs_.count(std::string(tensor)) > 0; }

const std::vector<size_t>& GraphIndex::consumers(std::string_view tensor) const {
  static const std::vector<size_t> kNone;
  auto it = consumers_.find(std::string(tensor));
  return it == consumers_.end() ? kNone : it->second;
}

bool is_f32_constant(const Graph& graph, std::string_view tensor) {
  auto it = graph.tensors.find(tensor);
  return it != graph.tensors.end() && it->second.is_constant() && it->second.dtype == DType::f32 &&
         !it->second.quant && it->second.layout.empty();
}

std::optional<std::vector<float>> constant_floats(const Graph& graph, std::string_view tensor) {
  if (!is_f32_constant(graph, tensor)) return std::nullopt;
  const TensorInfo& info = graph.tensor(tensor);
  std::vector<float> values(static_cast<size_t>(info.numel()));
  if (info.data.size() != values.size() * sizeof(float)) return std::nullopt;
  if (!values.empty()) std::memcpy(values.data(), info.data.data(), info.data.size());
  return values;
}

std::optional<double> scalar_constant(const Graph& graph, std::string_view tensor) {
  if (!is_f32_constant(graph, tensor)) return std::nullopt;
  const TensorInfo& info = graph.tensor(tensor);
  if (info.numel() != 1 || info.data.size() != sizeof(float)) return std::nullopt;
  float value;
  std::memcpy(&value, info.data.data(), sizeof(float));
  return value;
}

bool constant_all_equal(const Graph& graph, std::string_view tensor, float value) {
  auto values = constant_floats(graph, tensor);
  return values && std::all_of(values->begin(), values->end(), [&](float v) { return v == value; });
}

bool nearly_equal(double a, double b) { return std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)); }

std::string unique_tensor_name(const Graph& graph, std::string_view base) {
  if (!graph.has_tensor(base)) return std::string(base);
  for (size_t i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (!graph.has_tensor(name)) return name;
  }
}

std::string unique_node_name(const Graph& graph, std::string_view base) {
  std::unordered_set<std::string_view> names;
  for (const auto& node : graph.nodes) names.insert(node.name);
  if (!names.count(base)) return std::string(base);
  for (size_t i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (!names.count(name)) return name;
  }
}

std::string add_f32_constant(Graph& graph, std::string_view base, const Shape& shape, std::span<const float> values) {
  if (static_cast<int64_t>(values.size()) != numel(shape))
    fail(ExitCode::failure, "internal: constant '{}' has {} values for shape {}", base, values.size(), shape_str(shape));
  std::string name = unique_tensor_name(graph, base);
  graph.add_tensor(TensorInfo{.name = name,
                              .dtype = DType::f32,
                              .shape = shape,
                              .data = ConstData::copy_of(values.data(), values.size() * sizeof(float))});
  return name;
}

namespace {

void rename_tensor(Graph& graph, const std::string& from, const std::string& to) {
  for (auto& node : graph.nodes) {
    for (auto& in : node.inputs)
      if (in == from) in = to;
    for (auto& out : node.outputs)
      if (out == from) out = to;
  }
  for (auto& name : graph.outputs)
    if (name == from) name = to;
  auto it = graph.tensors.find(from);
  TensorInfo info = std::move(it->second);
  graph.tensors.erase(it);
  info.name = to;
  graph.tensors.erase(to);
  graph.tensors.emplace(to, std::move(info));
}

}  // namespace

bool bypass_node(Graph& graph, size_t index, const std::string& in, const std::string& out) {
  const bool out_is_output = std::find(graph.outputs.begin(), graph.outputs.end(), out) != graph.outputs.end();
  if (!out_is_output) {
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(index));
    for (auto& node : graph.nodes)
      for (auto& name : node.inputs)
        if (name == out) name = in;
    graph.tensors.erase(out);
    return true;
  }
  const bool in_is_output = std::find(graph.outputs.begin(), graph.outputs.end(), in) != graph.outputs.end();
  const bool in_is_input = std::find(graph.inputs.begin(), graph.inputs.end(), in) != graph.inputs.end();
  if (in_is_output || in_is_input || graph.tensor(in).is_constant()) return false;
  graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(index));
  rename_tensor(graph, in, out);
  return true;
}

void erase_nodes(Graph& graph, std::vector<size_t> remove) {
  std::sort(remove.begin(), remove.end());
  remove.erase(std::unique(remove.begin(), remove.end()), remove.end());
  for (auto it = remove.rbegin(); it != remove.rend(); ++it)
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(*it));
}

size_t replace_nodes(Graph& graph, std::vector<size_t> remove, Node replacement) {
  if (remove.empty()) fail(ExitCode::failure, "internal: replace_nodes with nothing to replace");
  const size_t last = *std::max_element(remove.begin(), remove.end());
  graph.nodes[last] = std::move(replacement);
  std::erase(remove, last);
  std::sort(remove.begin(), remove.end());
  remove.erase(std::unique(remove.begin(), remove.end()), remove.end());
  const size_t position = last - remove.size();
  erase_nodes(graph, std::move(remove));
  return position;
}

void rewrite_each(Graph& graph, const Rewrite& rewrite) {
  auto index = std::make_unique<GraphIndex>(graph);
  for (size_t i = 0; i < graph.nodes.size();) {
    if (auto next = rewrite(graph, *index, i)) {
      i = *next;
      index = std::make_unique<GraphIndex>(graph);
    } else {
      ++i;
    }
  }
}

bool has_no_fused_activation(const Node& node) {
  constexpr double kMax = std::numeric_limits<float>::max();
  auto bound = [&](std::string_view name) -> std::optional<double> {
    auto it = node.attrs.find(name);
    if (it == node.attrs.end() || !std::holds_alternative<double>(it->second)) return std::nullopt;
    return std::get<double>(it->second);
  };
  const auto lo = bound("act_min"), hi = bound("act_max");
  return (!lo || *lo <= -kMax) && (!hi || *hi >= kMax);
}

}  // namespace mt::passes
