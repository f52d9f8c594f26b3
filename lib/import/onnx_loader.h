// Reading an ONNX file: size checks, protobuf parsing, the opset of the default domain, and
// the ONNX checker run against the model's own directory (where its external data lives).
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

#include "lib/core/file_io.h"

namespace mt::onnx_import {

// The oldest default-domain opset mt translates; older models (opsets 1 to 8) are upgraded to it at
// load time with ONNX's version converter.
inline constexpr int kMinOpset = 9;

struct LoadedOnnx {
  std::unique_ptr<onnx::ModelProto> model;
  std::string source;     // the path, or "<stdin>"
  std::string directory;  // where external data is looked up; empty for standard input
  int opset = 0;          // of the default ("" / "ai.onnx") domain, after any upgrade
  int original_opset = 0; // the file's own; below kMinOpset when the model was upgraded
};

// Reads and checks an ONNX model from `path` ("-" or "": standard input). Throws Error naming
// the path: invalid_input for a missing, empty, truncated or non-ONNX file or one the checker
// rejects; unsupported for an opset older than kMinOpset that ONNX's version converter cannot upgrade.
LoadedOnnx load_onnx(const std::string& path);

// The same for bytes already in memory; `directory` is where external data is looked up, empty
// to refuse external data (as for standard input).
LoadedOnnx load_onnx_bytes(const InputBytes& bytes, const std::string& directory);

// Runs the ONNX checker; throws Error(invalid_input) with its message on one line. Models newer
// than the installed ONNX library knows (opset or IR version) are only logged, not rejected:
// their structure is still validated by the importer and the mt graph checks.
void check_onnx(const onnx::ModelProto& model, const std::string& source, const std::string& directory, int opset);

}  // namespace mt::onnx_import
