// ONNX import: turns an ONNX model into mt's graph IR (used by mt-convert only, the one part of
// mt that links ONNX and protobuf).
#pragma once

#include <map>
#include <string>

#include "lib/ir/graph.h"

namespace mt {

struct ImportOptions {
  // Fixes symbolic (or overrides) input dimensions: input name -> full static shape.
  std::map<std::string, Shape> input_shapes;
};

// Reads an ONNX file (with external-data tensors beside it) and returns a validated graph.
// Throws Error: invalid_input for a missing/malformed/truncated file or one that fails the ONNX
// checker, unsupported for ops mt cannot import (listing all of them), usage for dynamic inputs
// without input_shapes.
Graph import_onnx(const std::string& path, const ImportOptions& options);

}  // namespace mt
