// Runs shape inference on a single node built from tensor descriptions, for the op schema
// unit tests: the inferred outputs, or the message of the Error it fails with.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "lib/ops/registry.h"

namespace mt::test {

// An input of the node under test; `values` makes it a constant (int64).
inline TensorInfo tensor(Shape shape, DType dtype = DType::f32) {
  return TensorInfo{.name = "t", .dtype = dtype, .shape = std::move(shape)};
}
inline TensorInfo constant_i64(Shape shape, const std::vector<int64_t>& values) {
  TensorInfo info = tensor(std::move(shape), DType::i64);
  info.data = ConstData::copy_of(values.data(), values.size() * sizeof(int64_t));
  return info;
}

// Outputs inferred for one `op` node (nullopt inputs are absent optional inputs).
inline std::vector<TensorType> infer(const std::string& op, const std::vector<std::optional<TensorInfo>>& inputs,
                                     const Attributes& attrs = {}, int num_outputs = 1) {
  Node node{.name = "n", .op = op, .attrs = attrs};
  std::vector<const TensorInfo*> pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    node.inputs.push_back(inputs[i] ? "in" + std::to_string(i) : "");
    pointers.push_back(inputs[i] ? &*inputs[i] : nullptr);
  }
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back("out" + std::to_string(i));
  return infer_node(node, pointers);
}

// The shape of the single output.
inline Shape infer_shape(const std::string& op, const std::vector<std::optional<TensorInfo>>& inputs,
                         const Attributes& attrs = {}) {
  auto outputs = infer(op, inputs, attrs);
  REQUIRE(outputs.size() == 1);
  return outputs[0].shape;
}

// The message of the invalid_input Error that inference fails with, or a description of
// what happened instead.
inline std::string infer_error(const std::string& op, const std::vector<std::optional<TensorInfo>>& inputs,
                               const Attributes& attrs = {}, int num_outputs = 1) {
  try {
    infer(op, inputs, attrs, num_outputs);
  } catch (const Error& error) {
    if (error.code() != ExitCode::invalid_input) return std::string("wrong exit code: ") + error.what();
    return error.what();
  }
  return "(no error)";
}

// Checks that inference fails with invalid_input and a message containing `fragment`.
#define MT_CHECK_INFER_FAILS(fragment, ...)                            \
  do {                                                                 \
    const std::string mt_message = mt::test::infer_error(__VA_ARGS__); \
    INFO("message: ", mt_message);                                     \
    CHECK(mt_message.find(fragment) != std::string::npos);             \
  } while (false)

}  // namespace mt::test
