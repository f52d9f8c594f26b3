#include "lib/import/import_context.h"

#include <fmt/ranges.h>

#include <algorithm>

#include "lib/import/constant_values.h"
#include "lib/ops/eval/evaluate.h"
#include "lib/ops/registry.h"

namespace mt::onnx_import {

ImportContext::ImportContext(Graph& graph, const onnx::GraphProto& onnx_graph, ExternalFiles& external)
    : graph_(graph), external_(external) {
  add_names(onnx_graph);
  for (const auto& output : onnx_graph.output()) graph_outputs_.insert(output.name());
}

// The names of `onnx_graph` and of the subgraphs its nodes carry (If's branches, which the
// importer inlines): their initializers load like the main graph's, and fresh names avoid them all.
void ImportContext::add_names(const onnx::GraphProto& onnx_graph) {
  for (const auto& init : onnx_graph.initializer()) {
    initializers_.emplace(init.name(), &init);
    reserved_.insert(init.name());
  }
  for (const auto& input : onnx_graph.input()) reserved_.insert(input.name());
  for (const auto& output : onnx_graph.output()) {
    reserved_.insert(output.name());
    used_.insert(output.name());
  }
  for (const auto& node : onnx_graph.node()) {
    for (const auto& in : node.input()) used_.insert(in);
    for (const auto& out : node.output()) reserved_.insert(out);
    for (const auto& attribute : node.attribute()) {
      if (attribute.has_g()) add_names(attribute.g());
      for (const auto& subgraph : attribute.graphs()) add_names(subgraph);
    }
  }
}

std::string ImportContext::reserve_node_name(const std::string& candidate) {
  std::string name = candidate;
  for (int suffix = 1; !reserved_node_names_.insert(name).second; ++suffix)
    name = fmt::format("{}_{}", candidate, suffix);
  return name;
}

const std::string& ImportContext::tensor_name(const std::string& onnx_name) {
  if (auto alias = aliases_.find(onnx_name); alias != aliases_.end()) return alias->second;
  if (auto it = graph_.tensors.find(onnx_name); it != graph_.tensors.end()) return it->first;
  if (auto init = initializers_.find(onnx_name); init != initializers_.end())
    return add_constant(tensor_from_onnx(*init->second, onnx_name, external_));
  invalid_input("tensor '{}' is used before it is defined, or never defined", onnx_name);
}

std::string ImportContext::input(const OnnxNode& node, size_t i) {
  return node.has_input(i) ? tensor_name(node.input(i)) : std::string();
}

const TensorInfo& ImportContext::input_info(const OnnxNode& node, size_t i) {
  if (!node.has_input(i)) node.invalid("input {} is required", i);
  return graph_.tensor(tensor_name(node.input(i)));
}

std::vector<int64_t> ImportContext::const_ints(const OnnxNode& node, size_t i, std::string_view what) {
  if (!node.has_input(i)) node.invalid("input {} ({}) is required", i, what);
  const TensorInfo& info = input_info(node, i);
  if (!info.is_constant()) refuse_runtime_operand(node, i, what);
  if (!is_integer(info.dtype))
    node.invalid("input '{}' ({}) must hold integers, got {}", node.input(i), what, dtype_name(info.dtype));
  return read_ints(info);
}

std::vector<double> ImportContext::const_floats(const OnnxNode& node, size_t i, std::string_view what) {
  if (!node.has_input(i)) node.invalid("input {} ({}) is required", i, what);
  const TensorInfo& info = input_info(node, i);
  if (!info.is_constant()) refuse_runtime_operand(node, i, what);
  return read_doubles(info);
}

void ImportContext::refuse_runtime_operand(const OnnxNode& node, size_t i, std::string_view what) {
  require_known(node, {{i, what}});
  node.unsupported("input '{}' ({}) must be known at conversion", node.input(i), what);  // it is: not reached
}

void ImportContext::require_known(const OnnxNode& node, std::initializer_list<Operand> operands) {
  std::vector<std::string> refused, sources, unevaluated;
  std::unordered_map<std::string, size_t> producers;
  const std::set<std::string> inputs(graph_.inputs.begin(), graph_.inputs.end());
  for (const Operand& operand : operands) {
    if (!node.has_input(operand.index)) continue;
    const std::string start = input(node, operand.index);
    if (graph_.tensor(start).is_constant()) continue;
    refused.push_back(fmt::format("'{}' ({})", node.input(operand.index), operand.what));
    if (producers.empty()) producers = graph_.producers();
    // Walk back from the operand through the nodes that compute it to the graph inputs it reads,
    // and to the nodes that read only constants (left unevaluated: too large, or no kernel).
    std::vector<std::string> pending{start};
    std::set<std::string> seen{start};
    while (!pending.empty()) {
      const std::string name = pending.back();
      pending.pop_back();
      if (inputs.count(name) && std::find(sources.begin(), sources.end(), name) == sources.end())
        sources.push_back(name);
      const auto p = producers.find(name);
      if (p == producers.end()) continue;
      const Node& producer = graph_.nodes[p->second];
      bool constant_inputs = true;
      for (const auto& in : producer.inputs) {
        if (in.empty() || graph_.tensor(in).is_constant()) continue;
        constant_inputs = false;
        if (seen.insert(in).second) pending.push_back(in);
      }
      const std::string named = fmt::format("node '{}' ({})", producer.name, producer.op);
      if (constant_inputs && std::find(unevaluated.begin(), unevaluated.end(), named) == unevaluated.end())
        unevaluated.push_back(named);
    }
  }
  if (refused.empty()) return;
  auto position = [&](const std::string& name) { return std::find(graph_.inputs.begin(), graph_.inputs.end(), name); };
  std::sort(sources.begin(), sources.end(), [&](const auto& a, const auto& b) { return position(a) < position(b); });
  std::string message =
      fmt::format("input{} {} must be known at conversion, but {} computed at run time", refused.size() == 1 ? "" : "s",
                  fmt::join(refused, ", "), refused.size() == 1 ? "it is" : "they are");
  std::vector<std::string> whence;
  if (!sources.empty()) {
    std::vector<std::string> quoted;
    for (const auto& source : sources) {
      quoted.push_back("'" + source + "'");
      if (std::find(value_inputs_needed_.begin(), value_inputs_needed_.end(), source) == value_inputs_needed_.end())
        value_inputs_needed_.push_back(source);
    }
    whence.push_back(fmt::format("from graph input{} {}", sources.size() == 1 ? "" : "s", fmt::join(quoted, ", ")));
  }
  if (!unevaluated.empty())
    whence.push_back(
        fmt::format("from {} of constants, which mt does not evaluate at conversion (too large a "
                    "result, or no kernel for its types)",
                    fmt::join(unevaluated, ", ")));
  node.unsupported("{} {}", message, fmt::join(whence, " and "));
}

void ImportContext::alias(const std::string& onnx_name, const std::string& mt_name) {
  if (graph_.has_tensor(onnx_name) || !aliases_.emplace(onnx_name, mt_name).second)
    invalid_input("tensor '{}' is defined twice", onnx_name);
}

const std::string& ImportContext::add_constant(TensorInfo info) {
  auto name = info.name;
  graph_.add_tensor(std::move(info));
  return graph_.tensors.find(name)->first;
}

std::string ImportContext::fresh_name(const std::string& hint) {
  std::string name = hint;
  while (reserved_.count(name) || graph_.has_tensor(name) || aliases_.count(name))
    name = fmt::format("{}_{}", hint, ++fresh_counter_);
  reserved_.insert(name);
  return name;
}

std::string ImportContext::scalar(const OnnxNode& node, double value, DType dtype) {
  const double values[] = {value};
  return add_constant(make_constant(fresh_name(node.name() + "/const"), dtype, {}, values));
}

std::string ImportContext::node_name(const OnnxNode& node, const std::string& op,
                                     const std::vector<std::string>& outputs) {
  bool produces_onnx_output = false;
  for (const auto& out : outputs)
    for (size_t i = 0; i < node.num_outputs(); ++i) produces_onnx_output |= !out.empty() && out == node.output(i);
  if (produces_onnx_output && emitted_node_names_.insert(node.name()).second) return node.name();
  const std::string base = node.name() + "/" + op;
  std::string name = base;
  for (int suffix = 1; reserved_node_names_.count(name) || !emitted_node_names_.insert(name).second; ++suffix)
    name = fmt::format("{}_{}", base, suffix);
  return name;
}

bool ImportContext::try_fold(const Node& mt_node, const std::vector<const TensorInfo*>& inputs) {
  bool any_input = false;
  int64_t input_elements = 0;
  for (const TensorInfo* in : inputs) {
    if (in == nullptr) continue;
    if (!in->is_constant()) return false;
    any_input = true;
    input_elements += in->numel();
  }
  if (!any_input || !can_evaluate(mt_node.op)) return false;

  auto types = infer_node(mt_node, inputs);
  int64_t output_elements = 0;
  for (const auto& type : types) output_elements += numel(type.shape);
  if (!fold_size_allowed(input_elements, output_elements)) return false;
  std::vector<TensorInfo> outputs;
  std::vector<const TensorInfo*> output_infos;
  for (size_t i = 0; i < types.size(); ++i)
    outputs.push_back(TensorInfo{.name = mt_node.outputs[i], .dtype = types[i].dtype, .shape = std::move(types[i].shape)});
  for (const auto& out : outputs) output_infos.push_back(&out);
  auto values = evaluate_node(mt_node, inputs, output_infos);
  if (!values) return false;
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].data = std::move((*values)[i]);
    graph_.add_tensor(std::move(outputs[i]));
  }
  if (mt_node.op == "transpose") transpose_dequantized_origin(mt_node);
  return true;
}

// Gemm's transposed weight (transB = 0) keeps the integers DequantizeLinear made it from.
void ImportContext::transpose_dequantized_origin(const Node& transpose) {
  const TensorInfo* origin = dequantized_origin(transpose.inputs[0]);
  if (!origin || origin->dtype != DType::i8 || origin->shape.size() != 2) return;
  if (auto perm = transpose.attrs.find("perm");
      perm != transpose.attrs.end() && std::get<std::vector<int64_t>>(perm->second) != std::vector<int64_t>{1, 0})
    return;
  const auto rows = static_cast<size_t>(origin->shape[0]), cols = static_cast<size_t>(origin->shape[1]);
  TensorInfo t{.name = origin->name, .dtype = DType::i8, .shape = {origin->shape[1], origin->shape[0]},
               .quant = origin->quant};
  t.data = ConstData::allocate(rows * cols);
  const auto* src = reinterpret_cast<const int8_t*>(origin->data.data());
  auto* dst = reinterpret_cast<int8_t*>(t.data.mutable_data());
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
  if (t.quant->axis >= 0) t.quant->axis = 1 - t.quant->axis;
  note_dequantized_constant(transpose.outputs[0], std::move(t));
}

void ImportContext::emit(const OnnxNode& node, const std::string& op, std::vector<std::string> inputs, Attributes attrs,
                         std::vector<std::string> outputs) {
  Node mt_node{.name = node_name(node, op, outputs),
               .op = op,
               .inputs = std::move(inputs),
               .outputs = std::move(outputs),
               .attrs = std::move(attrs)};
  std::vector<const TensorInfo*> infos;
  for (const auto& in : mt_node.inputs) infos.push_back(in.empty() ? nullptr : &graph_.tensor(in));
  if (try_fold(mt_node, infos)) return;
  auto types = infer_node(mt_node, infos);
  for (size_t i = 0; i < types.size(); ++i)
    graph_.add_tensor(
        TensorInfo{.name = mt_node.outputs[i], .dtype = types[i].dtype, .shape = std::move(types[i].shape)});
  graph_.nodes.push_back(std::move(mt_node));
}

std::string ImportContext::emit1(const OnnxNode& node, const std::string& op, std::vector<std::string> inputs,
                                 Attributes attrs, const std::string& output) {
  emit(node, op, std::move(inputs), std::move(attrs), {output});
  return output;
}

void ImportContext::note_dequantized_constant(const std::string& mt_name, TensorInfo integers) {
  dequantized_origins_.insert_or_assign(mt_name, std::move(integers));
}

const TensorInfo* ImportContext::dequantized_origin(const std::string& mt_name) const {
  auto it = dequantized_origins_.find(mt_name);
  return it == dequantized_origins_.end() ? nullptr : &it->second;
}

}  // namespace mt::onnx_import
