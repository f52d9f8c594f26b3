// One ONNX node as the translators see it: its unique mt name, the model's opset, its inputs
// and outputs, and typed attribute access with defaults that checks each attribute's type.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "lib/core/error.h"

namespace mt::onnx_import {

class OnnxNode {
 public:
  OnnxNode(const onnx::NodeProto& proto, std::string name, int opset)
      : proto_(proto), name_(std::move(name)), opset_(opset) {}

  const onnx::NodeProto& proto() const { return proto_; }
  const std::string& op_type() const { return proto_.op_type(); }
  const std::string& name() const { return name_; }  // unique in the imported graph
  int opset() const { return opset_; }

  size_t num_inputs() const { return static_cast<size_t>(proto_.input_size()); }
  // The ONNX name of input i; "" when absent (empty or beyond the list).
  const std::string& input(size_t i) const;
  bool has_input(size_t i) const { return !input(i).empty(); }
  size_t num_outputs() const { return static_cast<size_t>(proto_.output_size()); }
  const std::string& output(size_t i) const;

  bool has_attr(std::string_view name) const { return find(name) != nullptr; }
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  double attr_float(std::string_view name, double fallback) const;
  std::string attr_string(std::string_view name, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(std::string_view name, const std::vector<int64_t>& fallback = {}) const;
  std::vector<double> attr_floats(std::string_view name, const std::vector<double>& fallback = {}) const;
  // A TENSOR attribute, nullptr when absent.
  const onnx::TensorProto* attr_tensor(std::string_view name) const;
  // The attribute, nullptr when absent.
  const onnx::AttributeProto* find(std::string_view name) const;

  // Errors naming this node: "node 'NAME' (OpType): MESSAGE".
  template <typename... Args>
  [[noreturn]] void invalid(fmt::format_string<Args...> format, Args&&... args) const {
    throw Error(ExitCode::invalid_input, prefix() + fmt::format(format, std::forward<Args>(args)...));
  }
  template <typename... Args>
  [[noreturn]] void unsupported(fmt::format_string<Args...> format, Args&&... args) const {
    throw Error(ExitCode::unsupported, prefix() + fmt::format(format, std::forward<Args>(args)...));
  }
  std::string prefix() const { return fmt::format("node '{}' ({}): ", name_, op_type()); }

 private:
  const onnx::AttributeProto& typed(std::string_view name, onnx::AttributeProto::AttributeType type,
                                    const onnx::AttributeProto& attr) const;

  const onnx::NodeProto& proto_;
  std::string name_;
  int opset_;
};

}  // namespace mt::onnx_import
