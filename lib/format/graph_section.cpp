// The graph section's reader (graph_section.h). The JSON reader (json_sax.h) hands over the JSON as a stream
// of events; GraphSax collects each tensor's and each node's fields as they come (scalars and lists of
// them as small json values, objects as the structs below) and turns them into the Graph. The checks
// and their messages are those of the format (mt-format(5)), made in the same order whatever order the
// file gives the keys in: tensors, then the graph's inputs and outputs, then the node count and the
// nodes, then the metadata. The first failure is kept and thrown once the whole section has parsed, so
// a syntax error anywhere is reported as such. Tensors are checked as they end (a tensor needs nothing
// from the rest of the graph); nodes after the parse, as they need the op registry, which is still
// being built on the data check's thread (model_file.cpp) while the JSON is parsed.
#include "lib/format/graph_section.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <vector>

#include "lib/core/error.h"
#include "lib/core/version.h"
#include "lib/format/json_sax.h"
#include "lib/format/little_endian.h"
#include "lib/format/model_file.h"
#include "lib/ir/stored_layout.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

using nlohmann::json;

constexpr int kMaxJsonDepth = 32;

// Every field starts absent (a discarded value) until its key is read. A list keeps its items as far
// as the checks look at them: scalars, and an object or list inside it as an empty one of that type.
json absent() { return json(json::value_t::discarded); }

std::string type_name(json::value_t type) { return json(type).type_name(); }

struct RawQuant {
  json::value_t type = json::value_t::object;  // anything else is refused
  json axis = absent(), table_offset = absent(), scales = absent(), zero_points = absent();
};

struct RawTensor {
  json name = absent(), dtype = absent(), shape = absent(), layout = absent(), offset = absent(), size = absent();
  std::optional<RawQuant> quant;
};

struct RawNode {
  json::value_t type = json::value_t::object;  // the list item's: anything else is refused
  json name = absent(), op = absent(), inputs = absent(), outputs = absent();
  json::value_t attrs_type = json::value_t::discarded;  // discarded: no 'attrs'
  std::map<std::string, json, std::less<>> attrs;       // in key order, as they are checked
};

// The checks of each part, throwing the format's errors.
class Checker {
 public:
  Checker(const DataSection& data, const std::string& source) : data_(data), source_(source) {}

  template <typename... Args>
  [[noreturn]] void bad(fmt::format_string<Args...> format, Args&&... args) const {
    invalid_input("{}: {}", source_, fmt::format(format, std::forward<Args>(args)...));
  }

  // Rejects deeply nested JSON before parsing, so hostile input cannot exhaust the stack.
  void check_json_depth(const char* text, size_t size) const {
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < size; ++i) {
      const char c = text[i];
      if (in_string) {
        if (c == '\\') ++i;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        if (++depth > kMaxJsonDepth) bad("graph section nests deeper than {} levels", kMaxJsonDepth);
      } else if (c == '}' || c == ']') {
        --depth;
      }
    }
  }

  json& field(json& value, const char* key, json::value_t type, const std::string& where) const {
    if (value.is_discarded()) bad("{}: missing '{}'", where, key);
    const bool ok = type == json::value_t::number_integer ? value.is_number_integer() : value.type() == type;
    if (!ok) bad("{}: '{}' has the wrong type ({})", where, key, value.type_name());
    return value;
  }

  // The list's type is checked by field(), its items here.
  std::vector<std::string> string_list(json& list, const std::string& where) const {
    std::vector<std::string> result;
    result.reserve(list.size());
    for (auto& item : list) {
      if (!item.is_string()) bad("{}: expected a list of strings", where);
      result.push_back(std::move(item.get_ref<std::string&>()));
    }
    return result;
  }

  // `what` follows `where` in the message (" shape"): joined only on failure.
  int64_t integer(const json& value, const std::string& where, const char* what = "") const {
    if (value.is_number_unsigned()) {
      if (value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) bad("{}{}: integer out of range", where, what);
      return static_cast<int64_t>(value.get<uint64_t>());
    }
    if (!value.is_number_integer()) bad("{}{}: expected an integer, got {}", where, what, value.type_name());
    return value.get<int64_t>();
  }

  void read_tensor(RawTensor& t, Graph& graph) const {
    TensorInfo info;
    info.name = std::move(field(t.name, "name", json::value_t::string, "tensor").get_ref<std::string&>());
    const std::string where = "tensor '" + info.name + "'";
    if (info.name.empty()) bad("a tensor has an empty name");
    if (graph.has_tensor(info.name)) bad("{} is defined twice", where);
    const auto& dtype_text = field(t.dtype, "dtype", json::value_t::string, where).get_ref<const std::string&>();
    auto dtype = dtype_from_name(dtype_text);
    if (!dtype) bad("{}: unknown dtype '{}'", where, dtype_text);
    info.dtype = *dtype;
    for (const auto& dim : field(t.shape, "shape", json::value_t::array, where)) {
      const int64_t d = integer(dim, where, " shape");
      if (d < 0) bad("{}: negative dimension {}", where, d);
      info.shape.push_back(d);
    }
    if (info.shape.size() > 8) bad("{}: rank {} exceeds the maximum of 8", where, info.shape.size());
    auto count = checked_numel(info.shape);
    if (!count) bad("{}: shape {} is too large", where, shape_str(info.shape));
    if (!t.layout.is_discarded()) {
      if (!t.layout.is_string()) bad("{}: 'layout' must be a string", where);
      info.layout = std::move(t.layout.get_ref<std::string&>());
    }
    if (t.quant) info.quant = read_quant(*t.quant, info, where);
    const bool has_offset = !t.offset.is_discarded(), has_size = !t.size.is_discarded();
    if (has_offset != has_size) bad("{}: 'offset' and 'size' must appear together", where);
    if (has_offset) {
      const int64_t offset = integer(t.offset, where, " offset");
      const int64_t size = integer(t.size, where, " size");
      // The size follows from dtype, shape and layout (a vulkan layout pads channels, may be fp16).
      uint64_t expected = 0;
      try {
        expected = stored_byte_size(info.dtype, info.shape, info.layout);
      } catch (const Error& e) {
        bad("{}: {}", where, e.what());
      }
      if (size < 0 || static_cast<uint64_t>(size) != expected)
        bad("{}: {} bytes stored, but {} {}{} needs {}", where, size, dtype_text, shape_str(info.shape),
            info.layout.empty() ? "" : fmt::format(" in layout '{}'", info.layout), expected);
      if (offset < 0 || offset % static_cast<int64_t>(kDataAlignment) != 0)
        bad("{}: data offset {} is not {}-byte aligned", where, offset, kDataAlignment);
      if (static_cast<uint64_t>(offset) > data_.size || expected > data_.size - static_cast<uint64_t>(offset))
        bad("{}: data ({} bytes at {}) lies outside the data section ({} bytes)", where, expected, offset, data_.size);
      info.data = ConstData(data_.owner, data_.bytes + offset, static_cast<size_t>(expected));
    }
    graph.tensors.emplace(info.name, std::move(info));
  }

  QuantParams read_quant(RawQuant& q, const TensorInfo& info, const std::string& where) const {
    if (q.type != json::value_t::object) bad("{}: 'quant' must be an object", where);
    QuantParams params;
    params.axis =
        static_cast<int>(integer(field(q.axis, "axis", json::value_t::number_integer, where + " quant"), where));
    std::vector<double> scales;
    std::vector<int64_t> zero_points;
    if (!q.table_offset.is_discarded()) {
      // float32 scales[n], int32 zero_points[n]; n is the size of the axis (checked below first).
      if (params.axis < 0 || static_cast<size_t>(params.axis) >= info.shape.size())
        bad("{}: a quant table needs a per-channel axis, got {}", where, params.axis);
      const auto n = static_cast<uint64_t>(info.shape[static_cast<size_t>(params.axis)]);
      const int64_t offset = integer(q.table_offset, where, " quant table_offset");
      if (offset < 0 || offset % static_cast<int64_t>(kDataAlignment) != 0)
        bad("{}: quant table offset {} is not {}-byte aligned", where, offset, kDataAlignment);
      if (static_cast<uint64_t>(offset) > data_.size || n > (data_.size - static_cast<uint64_t>(offset)) / 8)
        bad("{}: quant table ({} channels at {}) lies outside the data section ({} bytes)", where, n, offset,
            data_.size);
      const std::byte* at = data_.bytes + offset;
      for (uint64_t i = 0; i < n; ++i) {
        const uint32_t bits = get_le<uint32_t>(at + 4 * i);
        float scale;
        std::memcpy(&scale, &bits, 4);
        scales.push_back(scale);
        zero_points.push_back(static_cast<int32_t>(get_le<uint32_t>(at + 4 * (n + i))));
      }
    } else {
      for (const auto& s : field(q.scales, "scales", json::value_t::array, where + " quant")) {
        if (!s.is_number()) bad("{}: quant scales must be numbers", where);
        scales.push_back(s.get<double>());
      }
      for (const auto& z : field(q.zero_points, "zero_points", json::value_t::array, where + " quant"))
        zero_points.push_back(integer(z, where, " zero point"));
    }
    for (double scale : scales) {
      if (!(scale > 0) || !std::isfinite(scale)) bad("{}: quant scale {} must be positive and finite", where, scale);
      params.scales.push_back(static_cast<float>(scale));
    }
    for (int64_t zp : zero_points) {
      if (zp < -128 || zp > 255) bad("{}: zero point {} is out of range", where, zp);
      params.zero_points.push_back(static_cast<int32_t>(zp));
    }
    size_t expected = 1;
    if (params.axis >= 0) {
      if (static_cast<size_t>(params.axis) >= info.shape.size())
        bad("{}: quant axis {} is out of range", where, params.axis);
      expected = static_cast<size_t>(info.shape[static_cast<size_t>(params.axis)]);
    } else if (params.axis != -1) {
      bad("{}: quant axis {} is invalid", where, params.axis);
    }
    if (params.scales.size() != expected || params.zero_points.size() != expected)
      bad("{}: {} scales and {} zero points, expected {}", where, params.scales.size(), params.zero_points.size(),
          expected);
    return params;
  }

  Attribute read_attr(json& value, const AttrSpec& spec, const std::string& where) const {
    auto wrong = [&]() {
      bad("{}: attribute '{}' must be {}, got {}", where, spec.name, attr_type_name(spec.type), value.type_name());
    };
    switch (spec.type) {
      case AttrType::integer:
        if (!value.is_number_integer()) wrong();
        return integer(value, where);
      case AttrType::real:
        if (!value.is_number()) wrong();
        return value.get<double>();
      case AttrType::string:
        if (!value.is_string()) wrong();
        return std::move(value.get_ref<std::string&>());
      case AttrType::integers: {
        if (!value.is_array()) wrong();
        std::vector<int64_t> list;
        list.reserve(value.size());
        for (const auto& item : value) {
          if (!item.is_number_integer()) wrong();
          list.push_back(integer(item, where));
        }
        return list;
      }
      case AttrType::reals: {
        if (!value.is_array()) wrong();
        std::vector<double> list;
        list.reserve(value.size());
        for (const auto& item : value) {
          if (!item.is_number()) wrong();
          list.push_back(item.get<double>());
        }
        return list;
      }
    }
    wrong();
    return {};
  }

  Node read_node(RawNode& n) const {
    if (n.type != json::value_t::object) bad("nodes: expected objects");
    Node node;
    node.name = std::move(field(n.name, "name", json::value_t::string, "node").get_ref<std::string&>());
    const std::string where = "node '" + node.name + "'";
    node.op = std::move(field(n.op, "op", json::value_t::string, where).get_ref<std::string&>());
    const OpSchema* schema = find_op(node.op);
    if (schema == nullptr)
      fail(ExitCode::unsupported, "{}: {} uses op '{}', which this mt ({}) does not know (written by a newer mt?)",
           source_, where, node.op, version_string());
    node.inputs = string_list(field(n.inputs, "inputs", json::value_t::array, where), where + " inputs");
    node.outputs = string_list(field(n.outputs, "outputs", json::value_t::array, where), where + " outputs");
    if (n.attrs_type != json::value_t::discarded) {
      if (n.attrs_type != json::value_t::object) bad("{}: 'attrs' must be an object", where);
      for (auto& [key, value] : n.attrs) {
        const AttrSpec* spec = schema->find_attr(key);
        if (spec == nullptr) bad("{} ({}): unknown attribute '{}'", where, node.op, key);
        node.attrs.emplace(key, read_attr(value, *spec, where));
      }
    }
    return node;
  }

 private:
  const DataSection& data_;
  const std::string& source_;
};

// The handler parse_json_sax calls (nlohmann::json's SAX interface: each returns whether to go on).
class GraphSax {
 public:
  GraphSax(const Checker& check, Graph& graph) : check_(check), graph_(graph) {}

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool value) { return scalar(json(value)); }
  bool number_integer(json::number_integer_t value) { return scalar(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return scalar(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return scalar(json(value)); }
  bool string(json::string_t& value) { return scalar(json(std::move(value))); }
  bool binary(json::binary_t&) { return false; }  // JSON text has none
  bool start_object(size_t) { return open(json::value_t::object); }
  bool start_array(size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& name);
  bool parse_error(size_t, const std::string&, const json::exception&) { return false; }

  // After a successful parse: the checks in the format's order, then the rest of the graph.
  void finish();

 private:
  // Where the parser is: a frame per open object or array.
  enum class In { root, tensor_list, tensor, quant, node_list, node, attrs, list, metadata, skip };
  struct Frame {
    In in;
    json* container = nullptr;  // list: the array being filled; metadata: the value being built
  };
  // Where an object's next value goes (set by its key).
  enum class To { ignore, slot, tensors, nodes, metadata, quant, attrs };

  bool scalar(json value);
  bool open(json::value_t type);
  bool close();
  bool value(json::value_t type, json&& value);  // a scalar (type null..number) or an opened container
  json* add_metadata(json value);
  void tensors_start(json::value_t type);
  void nodes_start(json::value_t type);
  void tensor_done();
  void tensor_not_object();

  const Checker& check_;
  Graph& graph_;
  std::vector<Frame> stack_;
  bool root_done_ = false;
  To to_ = To::ignore;
  json* slot_ = nullptr;
  std::string metadata_key_;

  json::value_t tensors_type_ = json::value_t::discarded;
  RawTensor tensor_;                 // the tensor being read
  std::exception_ptr tensor_error_;  // the first tensor's failure
  json inputs_ = absent(), outputs_ = absent(), metadata_ = absent();
  json::value_t nodes_type_ = json::value_t::discarded;
  std::vector<RawNode> nodes_;  // up to kMaxNodes: beyond, only counted
  size_t node_count_ = 0;
};

bool GraphSax::key(json::string_t& name) {
  const Frame& top = stack_.back();
  to_ = To::slot;
  slot_ = nullptr;
  switch (top.in) {
    case In::root:
      if (name == "tensors") to_ = To::tensors;
      else if (name == "nodes") to_ = To::nodes;
      else if (name == "metadata") to_ = To::metadata;
      else if (name == "inputs") slot_ = &inputs_;
      else if (name == "outputs") slot_ = &outputs_;
      break;
    case In::tensor:
      if (name == "name") slot_ = &tensor_.name;
      else if (name == "dtype") slot_ = &tensor_.dtype;
      else if (name == "shape") slot_ = &tensor_.shape;
      else if (name == "layout") slot_ = &tensor_.layout;
      else if (name == "offset") slot_ = &tensor_.offset;
      else if (name == "size") slot_ = &tensor_.size;
      else if (name == "quant") to_ = To::quant;
      break;
    case In::quant:
      if (name == "axis") slot_ = &tensor_.quant->axis;
      else if (name == "table_offset") slot_ = &tensor_.quant->table_offset;
      else if (name == "scales") slot_ = &tensor_.quant->scales;
      else if (name == "zero_points") slot_ = &tensor_.quant->zero_points;
      break;
    case In::node:
      if (name == "name") slot_ = &nodes_.back().name;
      else if (name == "op") slot_ = &nodes_.back().op;
      else if (name == "inputs") slot_ = &nodes_.back().inputs;
      else if (name == "outputs") slot_ = &nodes_.back().outputs;
      else if (name == "attrs") to_ = To::attrs;
      break;
    case In::attrs: slot_ = &nodes_.back().attrs[std::move(name)]; break;  // a repeated key: the last value
    case In::metadata: metadata_key_ = std::move(name); break;
    default: break;  // keys inside skipped objects
  }
  if (to_ == To::slot && slot_ == nullptr) to_ = To::ignore;
  return true;
}

bool GraphSax::scalar(json value) {
  const json::value_t type = value.type();
  return this->value(type, std::move(value));
}

bool GraphSax::open(json::value_t type) { return value(type, json(type)); }

bool GraphSax::value(json::value_t type, json&& value) {
  const bool container = type == json::value_t::object || type == json::value_t::array;
  auto skip = [&] {
    if (container) stack_.push_back({In::skip});
    return true;
  };
  if (stack_.empty()) {  // the section itself: an object, read once
    if (root_done_ || type != json::value_t::object) return false;
    stack_.push_back({In::root});
    return true;
  }
  switch (stack_.back().in) {
    case In::skip: return skip();
    case In::list: {  // an item of a list of scalars: nested containers only by their type
      json* list = stack_.back().container;
      list->push_back(std::move(value));
      return skip();
    }
    case In::metadata: {
      json* added = add_metadata(std::move(value));
      if (container) stack_.push_back({In::metadata, added});
      return true;
    }
    case In::tensor_list:
      if (type != json::value_t::object) {
        tensor_not_object();
        return skip();
      }
      tensor_ = RawTensor{};
      stack_.push_back({In::tensor});
      return true;
    case In::node_list:
      ++node_count_;
      if (nodes_.size() >= kMaxNodes) return skip();  // too many: refused by count in finish()
      nodes_.emplace_back().type = type;
      if (type != json::value_t::object) return skip();
      stack_.push_back({In::node});
      return true;
    default: break;  // an object's value: by its key
  }
  switch (to_) {
    case To::ignore: return skip();
    case To::slot:
      *slot_ = std::move(value);
      if (type == json::value_t::array) {
        stack_.push_back({In::list, slot_});
        return true;
      }
      return skip();
    case To::tensors:
      tensors_start(type);
      if (type != json::value_t::array) return skip();
      stack_.push_back({In::tensor_list});
      return true;
    case To::nodes:
      nodes_start(type);
      if (type != json::value_t::array) return skip();
      stack_.push_back({In::node_list});
      return true;
    case To::metadata:
      metadata_ = std::move(value);
      if (container) stack_.push_back({In::metadata, &metadata_});
      return true;
    case To::quant:
      tensor_.quant.emplace().type = type;
      if (type != json::value_t::object) return skip();
      stack_.push_back({In::quant});
      return true;
    case To::attrs: {
      RawNode& node = nodes_.back();
      node.attrs_type = type;
      node.attrs.clear();
      if (type != json::value_t::object) return skip();
      stack_.push_back({In::attrs});
      return true;
    }
  }
  return false;
}

bool GraphSax::close() {
  const In in = stack_.back().in;
  stack_.pop_back();
  if (in == In::tensor) tensor_done();
  if (in == In::root) root_done_ = true;
  return true;
}

// A value inside the metadata, built as a json document (the graph keeps the metadata as one); a
// repeated key keeps the last value.
json* GraphSax::add_metadata(json value) {
  json& container = *stack_.back().container;
  if (container.is_array()) {
    container.push_back(std::move(value));
    return &container.back();
  }
  json& slot = container[metadata_key_];
  slot = std::move(value);
  return &slot;
}

// A repeated 'tensors' or 'nodes' replaces the earlier one.
void GraphSax::tensors_start(json::value_t type) {
  tensors_type_ = type;
  graph_.tensors.clear();
  tensor_error_ = nullptr;
}

void GraphSax::nodes_start(json::value_t type) {
  nodes_type_ = type;
  nodes_.clear();
  node_count_ = 0;
}

void GraphSax::tensor_done() {
  if (tensor_error_) return;  // only the first failure is reported
  try {
    check_.read_tensor(tensor_, graph_);
  } catch (...) {
    tensor_error_ = std::current_exception();
  }
}

void GraphSax::tensor_not_object() {
  if (tensor_error_) return;
  try {
    check_.bad("tensors: expected objects");
  } catch (...) {
    tensor_error_ = std::current_exception();
  }
}

void GraphSax::finish() {
  if (!root_done_) check_.bad("graph section is not valid JSON");
  if (tensors_type_ == json::value_t::discarded) check_.bad("graph: missing 'tensors'");
  if (tensors_type_ != json::value_t::array)
    check_.bad("graph: 'tensors' has the wrong type ({})", type_name(tensors_type_));
  if (tensor_error_) std::rethrow_exception(tensor_error_);
  graph_.inputs = check_.string_list(check_.field(inputs_, "inputs", json::value_t::array, "graph"), "graph inputs");
  graph_.outputs =
      check_.string_list(check_.field(outputs_, "outputs", json::value_t::array, "graph"), "graph outputs");
  if (nodes_type_ == json::value_t::discarded) check_.bad("graph: missing 'nodes'");
  if (nodes_type_ != json::value_t::array) check_.bad("graph: 'nodes' has the wrong type ({})", type_name(nodes_type_));
  if (node_count_ > kMaxNodes) check_.bad("{} nodes, more than the {} a model may have", node_count_, kMaxNodes);
  graph_.nodes.reserve(nodes_.size());
  for (RawNode& node : nodes_) graph_.nodes.push_back(check_.read_node(node));
  if (!metadata_.is_discarded()) {
    if (!metadata_.is_object()) check_.bad("'metadata' must be an object");
    graph_.metadata = std::move(metadata_);
  }
}

}  // namespace

Graph decode_graph_section(const char* text, size_t size, const DataSection& data, const std::string& source) {
  const Checker check(data, source);
  check.check_json_depth(text, size);
  Graph graph;
  GraphSax sax(check, graph);
  if (!parse_json_sax(text, text + size, &sax)) check.bad("graph section is not valid JSON");
  sax.finish();
  return graph;
}

}  // namespace mt
