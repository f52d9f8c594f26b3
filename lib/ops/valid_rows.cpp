#include "lib/ops/valid_rows.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

#include "lib/ops/op_table.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

bool is_elementwise(std::string_view op) {
  const OpInfo* info = find_op_info(op);
  return info != nullptr && (info->family == OpFamily::activation || info->family == OpFamily::binary ||
                             info->family == OpFamily::logic || info->family == OpFamily::quant);
}

int64_t node_axis(const Node& node, const Shape& shape) {
  const int64_t axis = attr_int(node, "axis");
  return axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
}

// Whether slice `node` takes axis 0 of `input` whole and in order.
bool slice_keeps_rows(const Node& node, const Shape& input) {
  const auto starts = attr_ints(node, "starts"), ends = attr_ints(node, "ends");
  std::vector<int64_t> axes = attr_ints(node, "axes"), steps = attr_ints(node, "steps");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const auto rank = static_cast<int64_t>(input.size());
  for (size_t k = 0; k < axes.size() && k < starts.size() && k < ends.size(); ++k) {
    if ((axes[k] < 0 ? axes[k] + rank : axes[k]) != 0) continue;
    const int64_t step = k < steps.size() ? steps[k] : 1;
    return step == 1 && (starts[k] == 0 || starts[k] <= -input[0]) && ends[k] >= input[0];
  }
  return true;
}

// Whether `node`, which reads the tensors `counted` (input index -> count) with a run-time row
// count, computes row i of every output from row i of those alone.
bool keeps_rows(const Graph& graph, const Node& node, const std::map<size_t, std::string>& counted) {
  auto shape = [&](const std::string& name) -> const Shape& { return graph.tensor(name).shape; };
  const Shape& first = shape(node.inputs[counted.begin()->first]);
  if (first.empty()) return false;
  if (is_elementwise(node.op)) {
    const Shape& out = shape(node.outputs[0]);
    if (out.empty() || out[0] != first[0]) return false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i].empty()) continue;
      const Shape& in = shape(node.inputs[i]);
      const bool same_rows = in.size() == out.size() && in[0] == out[0];
      const bool broadcasts_rows = in.size() < out.size() || in[0] == 1;
      if (counted.count(i) ? !same_rows : !broadcasts_rows) return false;
    }
    return true;
  }
  if (node.op == "gather") {
    const int64_t axis = node_axis(node, shape(node.inputs[0]));
    if (counted.size() != 1) return false;
    return counted.count(0) ? axis >= 1 : axis == 0 && !shape(node.inputs[1]).empty();
  }
  if (node.op == "slice") return slice_keeps_rows(node, first);
  if (node.op == "reshape" || node.op == "flatten" || node.op == "squeeze" || node.op == "unsqueeze" ||
      node.op == "identity") {
    // Row-major data, moved without reordering: row i stays row i when the row count stays.
    const Shape& out = shape(node.outputs[0]);
    return !out.empty() && out[0] == first[0];
  }
  if (node.op == "transpose") {
    const auto& perm = attr_ints(node, "perm");
    return !perm.empty() && perm[0] == 0;
  }
  if (node.op == "concat" || node.op == "split") return node_axis(node, first) >= 1;
  return false;
}

}  // namespace

bool writes_valid_row_count(std::string_view op) { return op == "non_max_suppression"; }

std::map<std::string, std::string> valid_row_counts(const Graph& graph, ExitCode code, bool require_output_counts) {
  std::map<std::string, std::string> counts;
  for (const Node& node : graph.nodes) {
    std::map<size_t, std::string> counted;  // input index -> its count
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (auto it = counts.find(node.inputs[i]); it != counts.end()) counted.emplace(i, it->second);
    if (counted.empty()) {
      if (writes_valid_row_count(node.op) && node.outputs.size() == 2)
        counts.emplace(node.outputs[0], node.outputs[1]);
      continue;
    }
    const std::string& count = counted.begin()->second;
    const std::string& input = node.inputs[counted.begin()->first];
    for (const auto& [i, other] : counted)
      if (other != count)
        throw Error(code, fmt::format("node '{}' ({}) reads '{}' and '{}', whose valid rows are counted at run time "
                                      "by different tensors ('{}', '{}')",
                                      node.name, node.op, input, node.inputs[i], count, other));
    if (!keeps_rows(graph, node, counted))
      throw Error(code, fmt::format("node '{}' ({}) reads '{}', whose number of valid rows is known only at run "
                                    "time (the count in '{}'); mt runs only row-wise ops on such a tensor: "
                                    "element-wise ops, and gather, slice, reshape, transpose, concat and split "
                                    "that keep axis 0",
                                    node.name, node.op, input, count));
    for (const auto& out : node.outputs) counts.emplace(out, count);
  }
  if (require_output_counts) {
    const std::set<std::string> outputs(graph.outputs.begin(), graph.outputs.end());
    for (const auto& name : graph.outputs)
      if (auto it = counts.find(name); it != counts.end() && !outputs.count(it->second))
        throw Error(code, fmt::format("graph output '{}' has its valid rows counted by '{}', which is not a graph "
                                      "output",
                                      name, it->second));
  }
  return counts;
}

}  // namespace mt
