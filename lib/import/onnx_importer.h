// ONNX import: turns an ONNX model into mt's graph IR (used by mt-convert only, the one part of
// mt that links ONNX and protobuf).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/core/file_io.h"
#include "lib/io/npy.h"
#include "lib/ir/graph.h"

namespace mt {

struct ImportOptions {
  // Fixes symbolic (or overrides) input dimensions: input name -> full static shape.
  std::map<std::string, Shape> input_shapes;
  // Pins graph inputs to values (--input-value): each becomes a constant and leaves the model's
  // inputs, so that what is computed from it (shapes, axes, sizes) is known at conversion.
  struct InputValue {
    std::string path;  // the .npy file, for messages
    HostArray value;
  };
  std::map<std::string, InputValue> input_values;
};

// Reads an ONNX file (with external-data tensors beside it; "-" or "" reads standard input) and
// returns a validated graph. Throws Error naming the file:
//   invalid_input  a missing, empty, truncated or non-ONNX file, one that fails the ONNX checker,
//                  or a model whose tensors or nodes are inconsistent;
//   unsupported    ops mt cannot import (one message listing all of them), opsets before 9 that
//                  ONNX's version converter cannot upgrade (older models are upgraded to 9 first);
//   unsupported    also an operand that must be known at conversion (a shape, axes, sizes) but is
//                  computed at run time: the message names the graph inputs it is computed from
//                  and suggests --input-value for them, all of them at once;
//   usage          inputs with dynamic dimensions and no input_shapes for them (the message lists
//                  each with its symbolic shape), or input_shapes or input_values naming inputs the
//                  model lacks, or both given for one input;
//   invalid_input  also an input value whose dtype or shape is not the input's.
Graph import_onnx(const std::string& path, const ImportOptions& options);

// The graph inputs whose values the conversion of `path` needs (what import_onnx's refusal would
// name for --input-value), in the order they are met; empty when it needs none. Imports as far as
// it can and ignores the model's other refusals; a model that cannot be read, or inputs that need
// input_shapes, are the errors import_onnx gives.
std::vector<std::string> value_inputs_needed(const std::string& path, const ImportOptions& options);

// The same from bytes in memory (`bytes.source` names them in errors); external data is refused.
// The entry point of the importer's fuzz target.
Graph import_onnx_bytes(const InputBytes& bytes, const ImportOptions& options);

// Parses one --input-shape value, "NAME:D0,D1,..." (the name may itself contain ':'; the last
// one separates it). Throws Error(usage) explaining the expected form.
std::pair<std::string, Shape> parse_input_shape(std::string_view spec);

// Parses one --input-value value, "NAME=FILE.npy" (the first '=' ends the name, as in mt-run's
// --input). Throws Error(usage) explaining the expected form.
std::pair<std::string, std::string> parse_input_value(std::string_view spec);

// Every ONNX op type mt imports (default domain), sorted: for --help and the man page.
std::vector<std::string> importable_onnx_ops();

}  // namespace mt
