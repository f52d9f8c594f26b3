// ONNX tensors to mt constants: element types, TensorProto data in any of its encodings
// (raw bytes, typed fields, external files beside the model), all sizes checked before use.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>

#include "lib/core/file_io.h"
#include "lib/ir/tensor.h"

namespace mt::onnx_import {

// The mt element type of an ONNX TensorProto.DataType, or nullopt when mt has none.
std::optional<DType> dtype_from_onnx(int32_t onnx_type);
// "DOUBLE", "STRING", ... for messages.
std::string onnx_type_name(int32_t onnx_type);

// Memory maps of external-data files, opened once each, resolved against the model's directory.
class ExternalFiles {
 public:
  // model_dir: the directory of the model file; empty when the model came from standard input
  // (external data is then refused).
  explicit ExternalFiles(std::string model_dir) : model_dir_(std::move(model_dir)) {}

  // The bytes of `location` (relative to the model's directory, never escaping it).
  const InputBytes& file(const std::string& location, const std::string& tensor_name);

 private:
  std::string model_dir_;
  std::map<std::string, InputBytes> files_;
};

// Converts a TensorProto (an initializer or a Constant's value) into a constant TensorInfo named
// `name`. Throws Error: invalid_input for inconsistent sizes or bad external references,
// unsupported for element types mt lacks.
TensorInfo tensor_from_onnx(const onnx::TensorProto& proto, const std::string& name, ExternalFiles& external);

}  // namespace mt::onnx_import
