#include "lib/import/opset_upgrade.h"

#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include "lib/core/error.h"

namespace mt::onnx_import {
namespace {

// The converter's messages may span lines and start with the failed assertion's place
// ("./onnx/version_converter/BaseConverter.h:66: adapter_lookup: Assertion `false` failed: ").
std::string converter_reason(const std::string& text) {
  std::string reason = text;
  if (const size_t at = reason.find("failed: "); at != std::string::npos) reason = reason.substr(at + 8);
  for (char& c : reason)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!reason.empty() && reason.back() == ' ') reason.pop_back();
  return reason.empty() ? "(no reason given)" : reason;
}

}  // namespace

onnx::ModelProto upgrade_opset(const onnx::ModelProto& model, int from_opset, int to_opset, const std::string& source) {
  // The adapters of broadcasting ops (Add and Gemm before opset 7, say) need the shapes of their
  // inputs, which old exporters seldom wrote: ONNX's shape inference adds them first, where it can.
  onnx::ModelProto shaped = model;
  try {
    onnx::shape_inference::InferShapes(shaped);
  } catch (const std::exception&) {
    shaped = model;  // the converter then says which op lacks shapes
  }
  try {
    return onnx::version_conversion::ConvertVersion(shaped, to_opset);
  } catch (const std::exception& e) {
    unsupported("{}: opset {} is older than {}, and ONNX's version converter cannot upgrade it: {}", source, from_opset,
                to_opset, converter_reason(e.what()));
  }
}

}  // namespace mt::onnx_import
