// Rules for ONNX's Loop and Scan, which mt imports by unrolling: mt plans one static graph, so
// a loop becomes its body repeated once per iteration, each copy's tensors renamed apart.
// - Scan: the number of iterations is the length of its scan axis, known when the shapes are.
//   Iteration t reads element t of each scan input (a gather; reversed directions count from the
//   end), the states flow from one copy to the next, and each scan output stacks its per-iteration
//   values along its axis (unsqueeze, then concat). (Opset 8's form, with a batch axis, is refused
//   before: opset_upgrade.cpp.)
// - Loop: unrolled when the trip count and every iteration's condition are constant after shape
//   folding (a Loop of a computed trip count whose condition stays true, as exporters write
//   `for i in range(n)`). A condition computed from the data at run time is refused: where the
//   loop stops would size its outputs.
// Unrolling is bounded (kMaxIterations, kMaxUnrolledNodes) so that a small model cannot make the
// importer build a huge graph; beyond, the node is refused.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "lib/import/constant_values.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

constexpr int64_t kMaxIterations = 4096;
constexpr int64_t kMaxUnrolledNodes = 1 << 16;

const onnx::GraphProto& body_of(const OnnxNode& node) {
  const onnx::AttributeProto* attribute = node.find("body");
  if (attribute == nullptr || !attribute->has_g()) node.invalid("attribute 'body' (a graph) is required");
  return attribute->g();
}

// Every tensor name a graph defines (inputs, node outputs), in it and in the graphs its nodes
// carry; initializers keep their names (constants, loaded once).
void defined_names(const onnx::GraphProto& graph, std::set<std::string>& names) {
  for (const auto& input : graph.input()) names.insert(input.name());
  for (const auto& node : graph.node()) {
    for (const auto& out : node.output())
      if (!out.empty()) names.insert(out);
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) defined_names(attribute.g(), names);
      for (const auto& subgraph : attribute.graphs()) defined_names(subgraph, names);
    }
  }
  for (const auto& init : graph.initializer()) names.erase(init.name());
}

void rename_in(onnx::GraphProto& graph, const std::map<std::string, std::string>& renamed) {
  auto rename = [&](std::string* name) {
    if (auto it = renamed.find(*name); it != renamed.end()) *name = it->second;
  };
  for (auto& input : *graph.mutable_input()) rename(input.mutable_name());
  for (auto& output : *graph.mutable_output()) rename(output.mutable_name());
  for (auto& node : *graph.mutable_node()) {
    for (auto& in : *node.mutable_input()) rename(&in);
    for (auto& out : *node.mutable_output()) rename(&out);
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) rename_in(*attribute.mutable_g(), renamed);
      for (auto& subgraph : *attribute.mutable_graphs()) rename_in(subgraph, renamed);
    }
  }
}

// Counts nodes, nested graphs' included.
int64_t node_count(const onnx::GraphProto& graph) {
  int64_t count = graph.node_size();
  for (const auto& node : graph.node())
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) count += node_count(attribute.g());
      for (const auto& subgraph : attribute.graphs()) count += node_count(subgraph);
    }
  return count;
}

// The body unrolled: each copy gets fresh names and its inputs bound to mt tensors.
class Unroller {
 public:
  Unroller(ImportContext& ctx, const OnnxNode& node) : ctx_(ctx), node_(node), body_(body_of(node)) {
    defined_names(body_, names_);
  }

  const onnx::GraphProto& body() const { return body_; }

  // Refuses a loop of `iterations` copies beyond the limits.
  void check_size(int64_t iterations) const {
    if (iterations > kMaxIterations || iterations * node_count(body_) > kMaxUnrolledNodes)
      node_.unsupported(
          "mt unrolls {} loops, and {} iterations of a {}-node body exceed its limit ({} iterations, {} "
          "nodes in all)",
          node_.op_type(), iterations, node_count(body_), kMaxIterations, kMaxUnrolledNodes);
  }

  // Translates one copy of the body with its inputs bound to `inputs` (mt names); returns the mt
  // names of its outputs.
  std::vector<std::string> run(const std::vector<std::string>& inputs) {
    if (static_cast<size_t>(body_.input_size()) != inputs.size())
      node_.invalid("the body has {} inputs, {} expected", body_.input_size(), inputs.size());
    const std::string copy = fmt::format("iteration_{}", copies_++);
    std::map<std::string, std::string> renamed;
    for (const auto& name : names_) renamed[name] = ctx_.fresh_name(fmt::format("{}/{}/{}", node_.name(), copy, name));
    auto graph = std::make_unique<onnx::GraphProto>(body_);
    rename_in(*graph, renamed);
    ctx_.add_subgraph_names(*graph);
    for (size_t i = 0; i < inputs.size(); ++i) ctx_.alias(graph->input(static_cast<int>(i)).name(), inputs[i]);
    translate_subgraph(ctx_, *graph, node_, copy);
    std::vector<std::string> outputs;
    for (const auto& output : graph->output()) outputs.push_back(ctx_.tensor_name(output.name()));
    copies_kept_.push_back(std::move(graph));
    return outputs;
  }

  // Element `index` of `tensor` along `axis`, the axis removed.
  std::string element(const std::string& tensor, int64_t axis, int64_t index, const std::string& hint) {
    const std::string at =
        ctx_.add_constant(make_constant(ctx_.fresh_name(hint + "/index"), DType::i64, {}, std::vector<int64_t>{index}));
    return ctx_.emit1(node_, "gather", {tensor, at}, {{"axis", axis}}, ctx_.fresh_name(hint));
  }

  // `parts` stacked along a new axis `axis` (as a graph output `output`, or a fresh name).
  std::string stack(const std::vector<std::string>& parts, int64_t axis, const std::string& output) {
    std::vector<std::string> expanded;
    for (const auto& part : parts)
      expanded.push_back(ctx_.emit1(node_, "unsqueeze", {part}, {{"axes", std::vector<int64_t>{axis}}},
                                    ctx_.fresh_name(output + "/element")));
    return ctx_.emit1(node_, "concat", expanded, {{"axis", axis}}, output);
  }

 private:
  ImportContext& ctx_;
  const OnnxNode& node_;
  const onnx::GraphProto& body_;
  std::set<std::string> names_;
  int64_t copies_ = 0;
  std::vector<std::unique_ptr<onnx::GraphProto>> copies_kept_;
};

// An output of the node, or a fresh name when the node leaves it out.
std::string output_name(ImportContext& ctx, const OnnxNode& node, size_t i) {
  return i < node.num_outputs() && !node.output(i).empty()
             ? node.output(i)
             : ctx.fresh_name(fmt::format("{}/output_{}", node.name(), i));
}

bool is_true(const TensorInfo& info) { return read_ints(info).at(0) != 0; }

// Loop(M?, cond?, v_initial...) -> (v_final..., scan_outputs...); body (i, cond, v...) -> (cond, v..., scan...).
void loop(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  Unroller unroller(ctx, node);
  const auto& body = unroller.body();
  const size_t carried = node.num_inputs() >= 2 ? node.num_inputs() - 2 : 0;
  if (body.output_size() < static_cast<int>(carried) + 1)
    node.invalid("the body has {} outputs for {} loop-carried values", body.output_size(), carried);
  const size_t scanned = static_cast<size_t>(body.output_size()) - 1 - carried;

  int64_t trips = -1;  // none: until the condition is false
  if (node.has_input(0)) {
    const std::vector<int64_t> m = ctx.const_ints(node, 0, "trip count M");
    if (m.size() != 1) node.invalid("trip count M must be one value");
    trips = std::max<int64_t>(m[0], 0);
  }
  bool running = true;
  if (node.has_input(1)) {
    const TensorInfo& cond = ctx.input_info(node, 1);
    if (!cond.is_constant())
      node.unsupported(
          "its condition '{}' is computed at run time: mt unrolls Loop, which needs the number of "
          "iterations when the model is converted",
          node.input(1));
    running = is_true(cond);
  }
  if (trips < 0 && !node.has_input(1)) node.invalid("has neither a trip count nor a condition: it never ends");

  std::vector<std::string> values;
  for (size_t k = 0; k < carried; ++k) values.push_back(ctx.input(node, 2 + k));
  std::vector<std::vector<std::string>> scans(scanned);
  int64_t iteration = 0;
  const std::string cond_true = ctx.add_constant(
      make_constant(ctx.fresh_name(node.name() + "/condition"), DType::boolean, {}, std::vector<int64_t>{1}));
  for (; running && (trips < 0 || iteration < trips); ++iteration) {
    unroller.check_size(iteration + 1);
    const std::string index =
        ctx.add_constant(make_constant(ctx.fresh_name(fmt::format("{}/iteration_{}", node.name(), iteration)),
                                       DType::i64, {}, std::vector<int64_t>{iteration}));
    std::vector<std::string> inputs{index, cond_true};
    inputs.insert(inputs.end(), values.begin(), values.end());
    const std::vector<std::string> outputs = unroller.run(inputs);
    const TensorInfo& cond = ctx.graph().tensor(outputs[0]);
    if (!cond.is_constant())
      node.unsupported(
          "the condition its body computes is known only at run time: mt unrolls Loop, which needs the "
          "number of iterations when the model is converted");
    running = is_true(cond);
    values.assign(outputs.begin() + 1, outputs.begin() + 1 + static_cast<int64_t>(carried));
    for (size_t k = 0; k < scanned; ++k) scans[k].push_back(outputs[1 + carried + k]);
  }
  for (size_t k = 0; k < carried; ++k) {
    if (k >= node.num_outputs() || node.output(k).empty()) continue;
    ctx.alias(node.output(k), values[k]);
  }
  for (size_t k = 0; k < scanned; ++k) {
    if (carried + k >= node.num_outputs() || node.output(carried + k).empty()) continue;
    if (scans[k].empty())
      node.unsupported("runs no iteration, so its scan output '{}' would be empty, of a shape no iteration gives",
                       node.output(carried + k));
    unroller.stack(scans[k], 0, node.output(carried + k));
  }
}

// Scan (opset 9+): states..., scan inputs... -> final states..., scan outputs...
void scan(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  Unroller unroller(ctx, node);
  const auto& body = unroller.body();
  const auto inputs = static_cast<int64_t>(node.num_inputs());
  const int64_t scan_inputs = node.attr_int("num_scan_inputs", -1);
  if (scan_inputs < 1 || scan_inputs > inputs)
    node.invalid("num_scan_inputs {} is not in [1, {}]", scan_inputs, inputs);
  const auto states = static_cast<size_t>(inputs - scan_inputs);
  if (static_cast<size_t>(body.output_size()) < states) node.invalid("the body has fewer outputs than states");
  const auto scan_outputs = static_cast<size_t>(body.output_size()) - states;
  auto ints_of = [&](const char* name, size_t count) {
    std::vector<int64_t> values = node.attr_ints(name, std::vector<int64_t>(count, 0));
    if (values.size() != count) node.invalid("attribute '{}' has {} values, expected {}", name, values.size(), count);
    return values;
  };
  const std::vector<int64_t> in_axes = ints_of("scan_input_axes", static_cast<size_t>(scan_inputs));
  const std::vector<int64_t> in_reverse = ints_of("scan_input_directions", static_cast<size_t>(scan_inputs));
  const std::vector<int64_t> out_axes = ints_of("scan_output_axes", scan_outputs);
  const std::vector<int64_t> out_reverse = ints_of("scan_output_directions", scan_outputs);

  int64_t length = -1;
  std::vector<int64_t> axes;  // of each scan input, normalised
  for (int64_t k = 0; k < scan_inputs; ++k) {
    const TensorInfo& x = ctx.input_info(node, states + static_cast<size_t>(k));
    const int64_t axis = node_axis(node, in_axes[static_cast<size_t>(k)], x.shape.size());
    const int64_t n = x.shape[static_cast<size_t>(axis)];
    if (length >= 0 && n != length) node.invalid("scan inputs of lengths {} and {}", length, n);
    length = n;
    axes.push_back(axis);
  }
  if (length < 1) node.unsupported("its scan inputs are empty: no iteration gives the scan outputs' shapes");
  unroller.check_size(length);

  std::vector<std::string> values;
  for (size_t s = 0; s < states; ++s) values.push_back(ctx.input(node, s));
  std::vector<std::vector<std::string>> outputs(scan_outputs);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<std::string> inputs = values;
    for (int64_t k = 0; k < scan_inputs; ++k) {
      const int64_t at = in_reverse[static_cast<size_t>(k)] != 0 ? length - 1 - t : t;
      inputs.push_back(unroller.element(ctx.input(node, states + static_cast<size_t>(k)), axes[static_cast<size_t>(k)],
                                        at, fmt::format("{}/step_{}", node.name(), t)));
    }
    const std::vector<std::string> results = unroller.run(inputs);
    values.assign(results.begin(), results.begin() + static_cast<int64_t>(states));
    for (size_t k = 0; k < scan_outputs; ++k) outputs[k].push_back(results[states + k]);
  }
  for (size_t s = 0; s < states; ++s) ctx.alias(output_name(ctx, node, s), values[s]);
  for (size_t k = 0; k < scan_outputs; ++k) {
    if (out_reverse[k] != 0) std::reverse(outputs[k].begin(), outputs[k].end());
    const size_t rank = ctx.graph().tensor(outputs[k][0]).shape.size() + 1;
    unroller.stack(outputs[k], node_axis(node, out_axes[k], rank), output_name(ctx, node, states + k));
  }
}

}  // namespace

void add_loop_translators(TranslatorTable& table) {
  table.add("Loop", loop);
  table.add("Scan", scan);
}

}  // namespace mt::onnx_import
