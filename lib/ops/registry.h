// The op registry: the schema of every op in the op table (lib/ops/op_table.inc, which lists the
// ops). For each op it holds the inputs, the attributes (types and defaults) and the shape
// inference. The importer, the passes, the model reader, the runtime, the backends and mt-opnames
// all read it.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/core/error.h"
#include "lib/ir/graph.h"

namespace mt {

struct AttrSpec {
  std::string name;
  AttrType type;
  std::optional<Attribute> default_value;  // nullopt: the attribute is required
};

struct TensorType {
  DType dtype;
  Shape shape;
};

class OpSchema;

// What a shape function sees: the node, its schema, and the input tensors (nullptr for an
// absent optional input). Constant inputs carry their data.
class InferContext {
 public:
  InferContext(const Node& node, const OpSchema& schema, std::vector<const TensorInfo*> inputs)
      : node_(node), schema_(schema), inputs_(std::move(inputs)) {}

  const Node& node() const { return node_; }
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  const TensorInfo& input(size_t i) const;  // throws if absent

  int64_t attr_int(std::string_view name) const;
  double attr_float(std::string_view name) const;
  const std::string& attr_string(std::string_view name) const;
  const std::vector<int64_t>& attr_ints(std::string_view name) const;
  const std::vector<double>& attr_floats(std::string_view name) const;

  // Throws Error(invalid_input) as "node 'NAME' (OP): MESSAGE".
  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    fail_message(fmt::format(format, std::forward<Args>(args)...));
  }
  [[noreturn]] void fail_message(const std::string& message) const;

 private:
  const Node& node_;
  const OpSchema& schema_;
  std::vector<const TensorInfo*> inputs_;
};

using ShapeFn = std::vector<TensorType> (*)(const InferContext& context);

class OpSchema {
 public:
  std::string name;                 // "conv2d"
  std::string summary;              // one line, shown by mt-opnames --list and in docs
  std::vector<std::string> inputs;  // input names in order; a trailing '?' marks optional
  bool variadic = false;            // the last input repeats (concat)
  int num_outputs = 1;              // -1: decided by attributes (split)
  std::vector<AttrSpec> attrs;
  ShapeFn infer = nullptr;

  const AttrSpec* find_attr(std::string_view attr) const;
  size_t min_inputs() const;  // inputs not marked optional
  size_t max_inputs() const;  // SIZE_MAX when variadic
  // The attribute's value on the node, else its default; throws Error(invalid_input) if it is
  // required and missing, or of the wrong type.
  const Attribute& attr(const Node& node, std::string_view attr) const;
};

// Looks up an op by name; nullptr if mt does not know it.
const OpSchema* find_op(std::string_view name);
// Looks up an op; throws Error(unsupported) naming the node if mt does not know it.
const OpSchema& get_op(const Node& node);
// Every registered op, sorted by name.
std::vector<const OpSchema*> all_ops();

// Typed attribute access with schema defaults, for kernels and passes.
int64_t attr_int(const Node& node, std::string_view name);
double attr_float(const Node& node, std::string_view name);
const std::string& attr_string(const Node& node, std::string_view name);
const std::vector<int64_t>& attr_ints(const Node& node, std::string_view name);
const std::vector<double>& attr_floats(const Node& node, std::string_view name);

// Checks a node against its schema (known op, input/output counts, attribute names and types),
// then infers its outputs. Throws Error naming the node.
std::vector<TensorType> infer_node(const Node& node, std::span<const TensorInfo* const> inputs);

// Registration: each lib/ops/ops_<family>.cpp defines one of these, one per MT_OP_FAMILY of the op
// table; registry.cpp calls them and checks each schema against its family's table lines.
class OpRegistry {
 public:
  void add(OpSchema schema) { added.push_back(std::move(schema)); }
  std::vector<OpSchema> added;
};
void register_activation_ops(OpRegistry& registry);
void register_binary_ops(OpRegistry& registry);
void register_logic_ops(OpRegistry& registry);
void register_reduce_ops(OpRegistry& registry);
void register_norm_ops(OpRegistry& registry);
void register_linear_ops(OpRegistry& registry);
void register_conv_ops(OpRegistry& registry);
void register_pool_ops(OpRegistry& registry);
void register_resize_ops(OpRegistry& registry);
void register_shape_ops(OpRegistry& registry);
void register_index_ops(OpRegistry& registry);
void register_quant_ops(OpRegistry& registry);
void register_recurrent_ops(OpRegistry& registry);
void register_sample_ops(OpRegistry& registry);
void register_signal_ops(OpRegistry& registry);

}  // namespace mt
