// ONNX import: turns an ONNX model into mt's graph IR (used by mt-convert only, the one part of
// mt that links ONNX and protobuf).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/core/file_io.h"
#include "lib/ir/graph.h"

namespace mt {

struct ImportOptions {
  // Fixes symbolic (or overrides) input dimensions: input name -> full static shape.
  std::map<std::string, Shape> input_shapes;
};

// Reads an ONNX file (with external-data tensors beside it; "-" or "" reads standard input) and
// returns a validated graph. Throws Error naming the file:
//   invalid_input  a missing, empty, truncated or non-ONNX file, one that fails the ONNX checker,
//                  or a model whose tensors or nodes are inconsistent;
//   unsupported    ops mt cannot import (one message listing all of them), opsets before 9 that
//                  ONNX's version converter cannot upgrade (older models are upgraded to 9 first);
//   usage          inputs with dynamic dimensions and no input_shapes for them (the message lists
//                  each with its symbolic shape), or input_shapes naming inputs the model lacks.
Graph import_onnx(const std::string& path, const ImportOptions& options);

// The same from bytes in memory (`bytes.source` names them in errors); external data is refused.
// The entry point of the importer's fuzz target.
Graph import_onnx_bytes(const InputBytes& bytes, const ImportOptions& options);

// Parses one --input-shape value, "NAME:D0,D1,..." (the name may itself contain ':'; the last
// one separates it). Throws Error(usage) explaining the expected form.
std::pair<std::string, Shape> parse_input_shape(std::string_view spec);

// Every ONNX op type mt imports (default domain), sorted: for --help and the man page.
std::vector<std::string> importable_onnx_ops();

}  // namespace mt
