#include "lib/ops/registry.h"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>

namespace mt {
namespace {

using SchemaMap = std::map<std::string, std::unique_ptr<OpSchema>, std::less<>>;

SchemaMap build_registry() {
  OpRegistry registry;
  register_activation_ops(registry);
  register_binary_ops(registry);
  register_reduce_ops(registry);
  register_norm_ops(registry);
  register_linear_ops(registry);
  register_conv_ops(registry);
  register_pool_ops(registry);
  register_resize_ops(registry);
  register_shape_ops(registry);
  register_quant_ops(registry);
  SchemaMap schemas;
  for (auto& schema : registry.added) {
    auto name = schema.name;
    if (!schemas.emplace(name, std::make_unique<OpSchema>(std::move(schema))).second)
      throw Error(ExitCode::failure, "internal: op registered twice: " + name);
  }
  return schemas;
}

const SchemaMap& registry() {
  static const SchemaMap schemas = build_registry();
  return schemas;
}

bool is_optional(const std::string& input) { return !input.empty() && input.back() == '?'; }

[[noreturn]] void node_error(ExitCode code, const Node& node, const std::string& message) {
  throw Error(code, fmt::format("node '{}' ({}): {}", node.name, node.op, message));
}

}  // namespace

const AttrSpec* OpSchema::find_attr(std::string_view attr) const {
  for (const auto& spec : attrs)
    if (spec.name == attr) return &spec;
  return nullptr;
}

size_t OpSchema::min_inputs() const {
  return static_cast<size_t>(std::count_if(inputs.begin(), inputs.end(), [](const auto& i) { return !is_optional(i); }));
}

size_t OpSchema::max_inputs() const { return variadic ? SIZE_MAX : inputs.size(); }

const Attribute& OpSchema::attr(const Node& node, std::string_view attr_name) const {
  const AttrSpec* spec = find_attr(attr_name);
  if (spec == nullptr) node_error(ExitCode::failure, node, fmt::format("internal: op has no attribute '{}'", attr_name));
  if (auto it = node.attrs.find(attr_name); it != node.attrs.end()) {
    if (attr_type(it->second) != spec->type)
      node_error(ExitCode::invalid_input, node,
                 fmt::format("attribute '{}' must be {}, got {}", attr_name, attr_type_name(spec->type),
                             attr_type_name(attr_type(it->second))));
    return it->second;
  }
  if (!spec->default_value) node_error(ExitCode::invalid_input, node, fmt::format("missing required attribute '{}'", attr_name));
  return *spec->default_value;
}

const OpSchema* find_op(std::string_view name) {
  const auto& schemas = registry();
  auto it = schemas.find(name);
  return it == schemas.end() ? nullptr : it->second.get();
}

const OpSchema& get_op(const Node& node) {
  const OpSchema* schema = find_op(node.op);
  if (schema == nullptr) node_error(ExitCode::unsupported, node, "unknown op");
  return *schema;
}

std::vector<const OpSchema*> all_ops() {
  std::vector<const OpSchema*> result;
  for (const auto& [name, schema] : registry()) result.push_back(schema.get());
  return result;
}

int64_t attr_int(const Node& node, std::string_view name) { return std::get<int64_t>(get_op(node).attr(node, name)); }
double attr_float(const Node& node, std::string_view name) { return std::get<double>(get_op(node).attr(node, name)); }
const std::string& attr_string(const Node& node, std::string_view name) {
  return std::get<std::string>(get_op(node).attr(node, name));
}
const std::vector<int64_t>& attr_ints(const Node& node, std::string_view name) {
  return std::get<std::vector<int64_t>>(get_op(node).attr(node, name));
}
const std::vector<double>& attr_floats(const Node& node, std::string_view name) {
  return std::get<std::vector<double>>(get_op(node).attr(node, name));
}

const TensorInfo& InferContext::input(size_t i) const {
  if (!has_input(i)) fail("input {} is required", i);
  return *inputs_[i];
}

int64_t InferContext::attr_int(std::string_view name) const { return std::get<int64_t>(schema_.attr(node_, name)); }
double InferContext::attr_float(std::string_view name) const { return std::get<double>(schema_.attr(node_, name)); }
const std::string& InferContext::attr_string(std::string_view name) const {
  return std::get<std::string>(schema_.attr(node_, name));
}
const std::vector<int64_t>& InferContext::attr_ints(std::string_view name) const {
  return std::get<std::vector<int64_t>>(schema_.attr(node_, name));
}
const std::vector<double>& InferContext::attr_floats(std::string_view name) const {
  return std::get<std::vector<double>>(schema_.attr(node_, name));
}

void InferContext::fail_message(const std::string& message) const {
  node_error(ExitCode::invalid_input, node_, message);
}

std::vector<TensorType> infer_node(const Node& node, std::span<const TensorInfo* const> inputs) {
  const OpSchema& schema = get_op(node);
  if (inputs.size() < schema.min_inputs() || inputs.size() > schema.max_inputs())
    node_error(ExitCode::invalid_input, node,
               schema.variadic ? fmt::format("expects at least {} inputs, got {}", schema.min_inputs(), inputs.size())
                               : fmt::format("expects {} to {} inputs, got {}", schema.min_inputs(),
                                             schema.max_inputs(), inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool optional = i < schema.inputs.size() ? is_optional(schema.inputs[i]) : false;
    if (inputs[i] == nullptr && !optional) node_error(ExitCode::invalid_input, node, fmt::format("input {} is required", i));
  }
  for (const auto& [name, value] : node.attrs) {
    const AttrSpec* spec = schema.find_attr(name);
    if (spec == nullptr) node_error(ExitCode::invalid_input, node, fmt::format("unknown attribute '{}'", name));
    if (attr_type(value) != spec->type)
      node_error(ExitCode::invalid_input, node,
                 fmt::format("attribute '{}' must be {}, got {}", name, attr_type_name(spec->type),
                             attr_type_name(attr_type(value))));
  }
  for (const auto& spec : schema.attrs)
    if (!spec.default_value && node.attrs.find(spec.name) == node.attrs.end())
      node_error(ExitCode::invalid_input, node, fmt::format("missing required attribute '{}'", spec.name));

  InferContext context(node, schema, std::vector<const TensorInfo*>(inputs.begin(), inputs.end()));
  std::vector<TensorType> outputs = schema.infer(context);
  if (outputs.size() != node.outputs.size())
    node_error(ExitCode::invalid_input, node, fmt::format("produces {} outputs, the node lists {}", outputs.size(), node.outputs.size()));
  for (const auto& out : outputs)
    if (!checked_numel(out.shape))
      node_error(ExitCode::invalid_input, node, fmt::format("output shape {} is too large", shape_str(out.shape)));
  return outputs;
}

}  // namespace mt
