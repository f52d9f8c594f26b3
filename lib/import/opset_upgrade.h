// Models older than the oldest opset mt translates (opsets 1 to 8) are upgraded at import with
// ONNX's own version converter, then take the normal path.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace mt::onnx_import {

// `model` rewritten from `from_opset` to `to_opset` of the default domain by
// onnx::version_conversion::ConvertVersion. Throws Error(unsupported) naming the source, both opsets
// and the converter's reason (which names the op it has no adapter for) when the converter fails, and
// Error(invalid_input) for a graph that reads or outputs a name nothing defines (the converter crashes
// on those).
onnx::ModelProto upgrade_opset(const onnx::ModelProto& model, int from_opset, int to_opset, const std::string& source);

}  // namespace mt::onnx_import
