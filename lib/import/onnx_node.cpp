#include "lib/import/onnx_node.h"

namespace mt::onnx_import {
namespace {

const std::string kNone;

}  // namespace

const std::string& OnnxNode::input(size_t i) const {
  return i < num_inputs() ? proto_.input(static_cast<int>(i)) : kNone;
}

const std::string& OnnxNode::output(size_t i) const {
  return i < num_outputs() ? proto_.output(static_cast<int>(i)) : kNone;
}

const onnx::AttributeProto* OnnxNode::find(std::string_view name) const {
  for (const auto& attr : proto_.attribute())
    if (attr.name() == name) return &attr;
  return nullptr;
}

const onnx::AttributeProto& OnnxNode::typed(std::string_view name, onnx::AttributeProto::AttributeType type,
                                            const onnx::AttributeProto& attr) const {
  // Old exporters leave `type` unset (0); then trust the field that is filled.
  if (attr.type() != type && attr.type() != onnx::AttributeProto::UNDEFINED)
    invalid("attribute '{}' must be {}, got {}", name, onnx::AttributeProto::AttributeType_Name(type),
            onnx::AttributeProto::AttributeType_Name(attr.type()));
  return attr;
}

int64_t OnnxNode::attr_int(std::string_view name, int64_t fallback) const {
  const auto* attr = find(name);
  return attr ? typed(name, onnx::AttributeProto::INT, *attr).i() : fallback;
}

double OnnxNode::attr_float(std::string_view name, double fallback) const {
  const auto* attr = find(name);
  return attr ? typed(name, onnx::AttributeProto::FLOAT, *attr).f() : fallback;
}

std::string OnnxNode::attr_string(std::string_view name, const std::string& fallback) const {
  const auto* attr = find(name);
  return attr ? typed(name, onnx::AttributeProto::STRING, *attr).s() : fallback;
}

std::vector<int64_t> OnnxNode::attr_ints(std::string_view name, const std::vector<int64_t>& fallback) const {
  const auto* attr = find(name);
  if (!attr) return fallback;
  const auto& ints = typed(name, onnx::AttributeProto::INTS, *attr).ints();
  return {ints.begin(), ints.end()};
}

std::vector<double> OnnxNode::attr_floats(std::string_view name, const std::vector<double>& fallback) const {
  const auto* attr = find(name);
  if (!attr) return fallback;
  const auto& floats = typed(name, onnx::AttributeProto::FLOATS, *attr).floats();
  return {floats.begin(), floats.end()};
}

const onnx::TensorProto* OnnxNode::attr_tensor(std::string_view name) const {
  const auto* attr = find(name);
  return attr ? &typed(name, onnx::AttributeProto::TENSOR, *attr).t() : nullptr;
}

}  // namespace mt::onnx_import
