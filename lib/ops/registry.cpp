#include "lib/ops/registry.h"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>

#include "lib/ops/op_table.h"

namespace mt {
namespace {

using SchemaMap = std::map<std::string, std::unique_ptr<OpSchema>, std::less<>>;

// The table's clamp column and the schema's act_min/act_max attributes say the same thing twice;
// fuse_activation reads the first and writes the second, so they must agree.
void check_clamp_attributes(const OpSchema& schema, const OpInfo& info) {
  const bool has_clamp = schema.find_attr("act_min") != nullptr && schema.find_attr("act_max") != nullptr;
  if (has_clamp != info.clamp)
    throw Error(ExitCode::failure, fmt::format("internal: op '{}': the op table's clamp column says {}, the schema {}",
                                               schema.name, info.clamp, has_clamp));
}

// Each family's register function must add exactly the table lines of that family.
void check_family(const OpSchema& schema, OpFamily family) {
  const OpInfo* info = find_op_info(schema.name);
  if (info == nullptr || info->family != family)
    throw Error(ExitCode::failure, fmt::format("internal: op '{}' registered by register_{}_ops is not a line of that "
                                               "family in lib/ops/op_table.inc",
                                               schema.name, family_name(family)));
  check_clamp_attributes(schema, *info);
}

SchemaMap build_registry() {
  SchemaMap schemas;
  auto add_family = [&](OpFamily family, void (*register_ops)(OpRegistry&)) {
    OpRegistry registry;
    register_ops(registry);
    for (auto& schema : registry.added) {
      check_family(schema, family);
      auto name = schema.name;
      if (!schemas.emplace(name, std::make_unique<OpSchema>(std::move(schema))).second)
        throw Error(ExitCode::failure, "internal: op registered twice: " + name);
    }
  };
  // One call per family of the op table (registry.h declares the functions).
#define MT_OP_FAMILY(family) add_family(OpFamily::family, register_##family##_ops);
#include "lib/ops/op_table.inc"
  for (const OpInfo& info : op_table())
    if (schemas.find(info.name) == schemas.end())
      throw Error(ExitCode::failure, fmt::format("internal: op '{}' is in lib/ops/op_table.inc but has no schema", info.name));
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
