// The import driver: load and check the file, list unsupported ops up front, fix the input
// shapes, translate the nodes in order (folding what is constant), then name the outputs,
// drop dead code and validate the graph.
#include "lib/import/onnx_importer.h"

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <filesystem>
#include <set>
#include <unordered_set>

#include "lib/core/error.h"
#include "lib/import/fold_qdq.h"
#include "lib/import/import_context.h"
#include "lib/import/onnx_loader.h"
#include "lib/import/translators.h"
#include "lib/ops/valid_rows.h"

namespace mt {
namespace {

using namespace onnx_import;

// How many node names an error lists per op before "and N more".
constexpr size_t kNamesListed = 5;

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string list_names(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < kNamesListed; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > kNamesListed) text += fmt::format(" and {} more", names.size() - kNamesListed);
  return text;
}

// Every node gets a unique name: its ONNX name, else "<OpType>_<index>".
std::vector<std::string> assign_node_names(ImportContext& ctx, const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    names.push_back(ctx.reserve_node_name(node.name().empty() ? fmt::format("{}_{}", node.op_type(), i) : node.name()));
  }
  return names;
}

// Op types mt cannot import at all, all of them in one error, before anything else is asked.
void check_op_types(const onnx::GraphProto& graph, const std::vector<std::string>& names, const std::string& source) {
  std::map<std::string, std::vector<std::string>> missing;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (is_default_domain(node.domain()) && find_translator(node.op_type())) continue;
    const std::string op = is_default_domain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
    missing[op].push_back(names[static_cast<size_t>(i)]);
  }
  if (missing.empty()) return;
  std::string text;
  for (const auto& [op, nodes] : missing)
    text += fmt::format("{}{} ({} node{}: {})", text.empty() ? "" : ", ", op, nodes.size(),
                        nodes.size() == 1 ? "" : "s", list_names(nodes));
  unsupported("{}: unsupported ONNX ops: {}", source, text);
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) text += (i ? separator : "") + items[i];
  return text;
}

// Declares the graph inputs (initializers are constants, not inputs) with static shapes: the
// model's own, or --input-shape's. Dynamic dimensions left over are one usage error. An input
// --input-value pins becomes a constant instead.
void add_inputs(Graph& graph, const onnx::GraphProto& onnx_graph, const ImportOptions& options,
                const std::string& source) {
  std::unordered_set<std::string> initializers;
  for (const auto& init : onnx_graph.initializer()) initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& input : onnx_graph.input())
    if (!initializers.count(input.name())) inputs.push_back(&input);

  auto require_input = [&](const char* flag, const std::string& name) {
    for (const auto* input : inputs)
      if (input->name() == name) return;
    std::vector<std::string> real;
    for (const auto* input : inputs) real.push_back(input->name());
    fail(ExitCode::usage, "{}: {} names '{}', which is not an input of the model; its inputs are: {}", source, flag,
         name, real.empty() ? "(none)" : join(real, ", "));
  };
  for (const auto& [name, shape] : options.input_shapes) require_input("--input-shape", name);
  for (const auto& [name, value] : options.input_values) {
    require_input("--input-value", name);
    if (options.input_shapes.count(name))
      fail(ExitCode::usage, "{}: input '{}' is given both --input-shape and --input-value; its value gives its shape",
           source, name);
  }

  std::vector<std::string> dynamic, examples;
  for (const auto* input : inputs) {
    const std::string& name = input->name();
    if (!input->type().has_tensor_type()) unsupported("{}: input '{}' is not a tensor", source, name);
    const auto& tensor_type = input->type().tensor_type();
    auto dtype = dtype_from_onnx(tensor_type.elem_type());
    if (!dtype)
      unsupported("{}: input '{}' has element type {}, which mt does not support", source, name,
                  onnx_type_name(tensor_type.elem_type()));
    std::vector<std::string> labels;  // each dimension as declared: a number or a symbol
    Shape declared;
    bool is_static = tensor_type.has_shape();
    for (const auto& dim : tensor_type.shape().dim()) {
      const bool known = dim.has_dim_value() && dim.dim_value() >= 0;
      declared.push_back(known ? dim.dim_value() : -1);
      labels.push_back(known ? std::to_string(dim.dim_value()) : dim.has_dim_param() ? dim.dim_param() : "?");
      is_static &= known;
    }
    if (auto pinned = options.input_values.find(name); pinned != options.input_values.end()) {
      const HostArray& value = pinned->second.value;
      bool matches = value.dtype == *dtype && (!tensor_type.has_shape() || value.shape.size() == declared.size());
      for (size_t i = 0; matches && i < declared.size(); ++i)
        matches = declared[i] < 0 || declared[i] == value.shape[i];
      if (!matches)
        invalid_input("{}: --input-value {}: {} holds {} [{}], but the model declares '{}' as {} {}", source, name,
                      pinned->second.path, dtype_name(value.dtype), fmt::join(value.shape, ", "), name,
                      dtype_name(*dtype), tensor_type.has_shape() ? "[" + join(labels, ", ") + "]" : "of any shape");
      graph.add_tensor(TensorInfo{.name = name, .dtype = *dtype, .shape = value.shape, .data = value.data});
      continue;
    }
    Shape shape = declared;
    if (auto given = options.input_shapes.find(name); given != options.input_shapes.end()) {
      shape = given->second;
      if (tensor_type.has_shape() && shape.size() != declared.size())
        fail(ExitCode::usage, "{}: --input-shape {} gives rank {}, but the model declares '{}' as {}", source, name,
             shape.size(), name, join(labels, " x "));
      for (size_t i = 0; i < declared.size(); ++i)
        if (declared[i] >= 0 && declared[i] != shape[i])
          spdlog::warn("{}: --input-shape overrides dimension {} of '{}' ({} -> {})", source, i, name, declared[i],
                       shape[i]);
    } else if (!is_static) {
      dynamic.push_back(tensor_type.has_shape() ? fmt::format("{}: {}", name, join(labels, " x "))
                                                : name + ": unknown shape");
      for (auto& label : labels)
        if (label.find_first_not_of("0123456789") != std::string::npos) label = "1";
      examples.push_back(
          fmt::format("--input-shape {}:{}", name, tensor_type.has_shape() ? join(labels, ",") : "D0,D1,..."));
      continue;
    }
    if (!checked_numel(shape))
      invalid_input("{}: input '{}' has shape {}, which is too large", source, name, shape_str(shape));
    graph.add_tensor(TensorInfo{.name = name, .dtype = *dtype, .shape = shape});
    graph.inputs.push_back(name);
  }
  if (!dynamic.empty())
    fail(ExitCode::usage,
         "{}: inputs with dynamic dimensions: {}; give static shapes with --input-shape NAME:D0,D1,... (e.g. {})",
         source, join(dynamic, "; "), join(examples, " "));
}

// Translates every node in order. A node mt cannot import is recorded and its outputs marked
// unavailable, so that one error lists every such node rather than only the first.
void translate_nodes(ImportContext& ctx, const onnx::GraphProto& graph, const std::vector<std::string>& names,
                     int opset, const std::string& source) {
  std::unordered_set<std::string> unavailable;
  std::vector<std::string> problems;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& proto = graph.node(i);
    const OnnxNode node(proto, names[static_cast<size_t>(i)], opset);
    bool blocked = false;  // downstream of an unsupported node: not reported itself
    for (const auto& in : proto.input()) blocked |= unavailable.count(in) != 0;
    if (!blocked) {
      try {
        const TranslatorEntry* entry = is_default_domain(proto.domain()) ? find_translator(proto.op_type()) : nullptr;
        if (entry == nullptr) node.unsupported("mt cannot import this op type");
        entry->translate(ctx, node, entry->mt_op);
        continue;
      } catch (const Error& e) {
        if (e.code() != ExitCode::unsupported) throw;
        problems.push_back(e.what());
      }
    }
    for (const auto& out : proto.output()) unavailable.insert(out);
  }
  if (problems.size() == 1) unsupported("{}: {}", source, problems[0]);
  if (!problems.empty())
    unsupported("{}: {} nodes cannot be imported: {}", source, problems.size(), join(problems, "; "));
}

}  // namespace

void onnx_import::translate_subgraph(ImportContext& ctx, const onnx::GraphProto& subgraph, const OnnxNode& owner,
                        const std::string& branch) {
  std::vector<std::string> names;
  for (int i = 0; i < subgraph.node_size(); ++i) {
    const auto& node = subgraph.node(i);
    names.push_back(ctx.reserve_node_name(fmt::format("{}/{}/{}", owner.name(), branch,
                                                      node.name().empty() ? fmt::format("{}_{}", node.op_type(), i) : node.name())));
  }
  for (int i = 0; i < subgraph.node_size(); ++i) {
    const auto& node = subgraph.node(i);
    if (!is_default_domain(node.domain()) || !find_translator(node.op_type()))
      owner.unsupported("{} holds node '{}' of op type {}, which mt cannot import", branch, names[static_cast<size_t>(i)],
                        node.op_type());
  }
  translate_nodes(ctx, subgraph, names, owner.opset(), fmt::format("node '{}' ({}) {}", owner.name(), owner.op_type(), branch));
}

namespace {

void rename_tensor(Graph& graph, const std::string& from, const std::string& to) {
  auto entry = graph.tensors.extract(from);
  entry.key() = to;
  entry.mapped().name = to;
  graph.tensors.insert(std::move(entry));
  for (auto& node : graph.nodes) {
    for (auto& in : node.inputs)
      if (in == from) in = to;
    for (auto& out : node.outputs)
      if (out == from) out = to;
  }
}

// Graph outputs keep their ONNX names. One that became another tensor (through Identity,
// Dropout or a no-op Cast) renames that tensor when nothing else needs its name, else gets an
// identity node.
void add_outputs(ImportContext& ctx, Graph& graph, const onnx::GraphProto& onnx_graph) {
  std::set<std::string> output_names;
  for (const auto& output : onnx_graph.output()) output_names.insert(output.name());
  const std::set<std::string> input_names(graph.inputs.begin(), graph.inputs.end());
  const auto producers = graph.producers();
  std::map<std::string, std::string> renamed;  // old mt name -> the output name it now has
  for (const auto& output : onnx_graph.output()) {
    const std::string& name = output.name();
    std::string source = ctx.tensor_name(name);
    if (auto it = renamed.find(source); it != renamed.end()) source = it->second;
    if (source != name) {
      const bool renamable = producers.count(source) && !output_names.count(source) && !input_names.count(source);
      if (renamable) {
        rename_tensor(graph, source, name);
        renamed.emplace(source, name);
      } else {
        TensorInfo info = graph.tensor(source);
        graph.add_tensor(TensorInfo{.name = name, .dtype = info.dtype, .shape = info.shape});
        graph.nodes.push_back(Node{.name = ctx.reserve_node_name(name + "/identity"),
                                   .op = "identity",
                                   .inputs = {source},
                                   .outputs = {name}});
      }
    }
    graph.outputs.push_back(name);
  }
}

// Drops nodes none of whose outputs reach a graph output.
void remove_dead_nodes(Graph& graph) {
  std::unordered_set<std::string> live(graph.outputs.begin(), graph.outputs.end());
  std::vector<bool> keep(graph.nodes.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const Node& node = graph.nodes[i];
    for (const auto& out : node.outputs) keep[i] = keep[i] || live.count(out);
    if (keep[i]) live.insert(node.inputs.begin(), node.inputs.end());
  }
  std::vector<Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (keep[i]) kept.push_back(std::move(graph.nodes[i]));
  if (kept.size() != graph.nodes.size()) spdlog::debug("removed {} unused nodes", graph.nodes.size() - kept.size());
  graph.nodes = std::move(kept);
}

// Outputs with a data-dependent number of valid rows (NonMaxSuppression's, and what row-wise ops
// compute from them): their counts become graph outputs too, after them, named after the first
// output they count ("NAME.valid_rows"), so that mt-run and the C API can give the valid rows. An
// op that is not row-wise reading such a tensor is refused.
void add_valid_row_counts(Graph& graph) {
  const auto counts = valid_row_counts(graph, ExitCode::unsupported, false);
  std::map<std::string, std::string> added;  // count -> its graph output's name
  std::vector<std::string> outputs = graph.outputs;
  for (const auto& name : graph.outputs) {
    const auto it = counts.find(name);
    if (it == counts.end() || added.count(it->second) ||
        std::find(graph.outputs.begin(), graph.outputs.end(), it->second) != graph.outputs.end())
      continue;
    const std::string named = name + ".valid_rows";
    const bool free = !graph.has_tensor(named);
    if (free) rename_tensor(graph, it->second, named);
    outputs.push_back(free ? named : it->second);
    added.emplace(it->second, outputs.back());
  }
  graph.outputs = std::move(outputs);
}

nlohmann::json source_metadata(const LoadedOnnx& loaded) {
  const auto& model = *loaded.model;
  std::string producer = model.producer_name();
  if (!model.producer_version().empty()) producer += (producer.empty() ? "" : " ") + model.producer_version();
  const std::string file =
      loaded.directory.empty() ? loaded.source : std::filesystem::path(loaded.source).filename().string();
  nlohmann::json metadata = {{"format", "onnx"}, {"file", file}, {"opset", loaded.opset}, {"producer", producer}};
  if (loaded.original_opset != loaded.opset) metadata["upgraded_from_opset"] = loaded.original_opset;
  return metadata;
}

}  // namespace

namespace {

// The refusal of operands that must be known at conversion, with the one flag that fixes them all.
Error with_value_hint(const Error& e, const ImportContext& ctx) {
  const auto& needed = ctx.value_inputs_needed();
  if (e.code() != ExitCode::unsupported || needed.empty()) return e;
  std::string flags;
  for (const auto& name : needed) flags += fmt::format(" --input-value {}=FILE.npy", name);
  return Error(e.code(), fmt::format("{}; mt plans static shapes: give the value{} of {} at conversion with{}",
                                     e.what(), needed.size() == 1 ? "" : "s", join(needed, ", "), flags));
}

Graph import_loaded(LoadedOnnx loaded, const ImportOptions& options) {
  const onnx::GraphProto& onnx_graph = loaded.model->graph();
  Graph graph;
  ExternalFiles external(loaded.directory);
  ImportContext ctx(graph, onnx_graph, external);
  const auto names = assign_node_names(ctx, onnx_graph);
  check_op_types(onnx_graph, names, loaded.source);
  add_inputs(graph, onnx_graph, options, loaded.source);
  try {
    try {
      translate_nodes(ctx, onnx_graph, names, loaded.opset, loaded.source);
    } catch (const Error& e) {
      throw with_value_hint(e, ctx);
    }
    add_outputs(ctx, graph, onnx_graph);
    graph.sort_topologically();
    fold_qdq(graph, ctx);
    remove_dead_nodes(graph);
    graph.infer_shapes();
    add_valid_row_counts(graph);
    graph.remove_unused_tensors();
    graph.validate();
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with(loaded.source + ": ")) throw;
    throw with_context(e, loaded.source);
  }
  graph.metadata["source"] = source_metadata(loaded);
  if (!options.input_values.empty()) {
    auto& pinned = graph.metadata["source"]["input_values"] = nlohmann::json::array();
    for (const auto& [name, value] : options.input_values) pinned.push_back(name);
  }
  spdlog::info(
      "imported {}: opset {}, {} ONNX nodes -> {} mt nodes, {} constants", loaded.source, loaded.opset,
      onnx_graph.node_size(), graph.nodes.size(),
      std::count_if(graph.tensors.begin(), graph.tensors.end(), [](const auto& t) { return t.second.is_constant(); }));
  return graph;
}

}  // namespace

Graph import_onnx(const std::string& path, const ImportOptions& options) { return import_loaded(load_onnx(path), options); }

Graph import_onnx_bytes(const InputBytes& bytes, const ImportOptions& options) {
  return import_loaded(load_onnx_bytes(bytes, ""), options);
}

std::vector<std::string> value_inputs_needed(const std::string& path, const ImportOptions& options) {
  LoadedOnnx loaded = load_onnx(path);
  const onnx::GraphProto& onnx_graph = loaded.model->graph();
  Graph graph;
  ExternalFiles external(loaded.directory);
  ImportContext ctx(graph, onnx_graph, external);
  const auto names = assign_node_names(ctx, onnx_graph);
  try {
    add_inputs(graph, onnx_graph, options, loaded.source);
    translate_nodes(ctx, onnx_graph, names, loaded.opset, loaded.source);
  } catch (const Error& e) {
    if (e.code() != ExitCode::unsupported) throw;  // other refusals are not this listing's business
  }
  return ctx.value_inputs_needed();
}

std::pair<std::string, std::string> parse_input_value(std::string_view spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size())
    fail(ExitCode::usage, "--input-value '{}': expected NAME=FILE.npy (e.g. shape=shape.npy)", spec);
  return {std::string(spec.substr(0, eq)), std::string(spec.substr(eq + 1))};
}

std::pair<std::string, Shape> parse_input_shape(std::string_view spec) {
  auto bad = [&](std::string_view why) {
    fail(ExitCode::usage, "--input-shape '{}': {}; expected NAME:D0,D1,... (e.g. input:1,3,224,224)", spec, why);
  };
  const size_t colon = spec.rfind(':');
  if (colon == std::string_view::npos) bad("no ':' between the name and the dimensions");
  if (colon == 0) bad("the input name is empty");
  std::string_view dims = spec.substr(colon + 1);
  if (dims.empty()) bad("no dimensions");
  Shape shape;
  while (true) {
    const size_t comma = dims.find(',');
    const std::string_view text = dims.substr(0, comma);
    int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1)
      bad(fmt::format("dimension '{}' is not a positive integer", text));
    shape.push_back(value);
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
  }
  if (!checked_numel(shape)) bad("the shape is too large");
  return {std::string(spec.substr(0, colon)), shape};
}

std::vector<std::string> importable_onnx_ops() { return onnx_import::importable_onnx_ops(); }

}  // namespace mt
