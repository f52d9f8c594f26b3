#include "lib/import/opset_upgrade.h"

#include <onnx/version_converter/convert.h>

#include "lib/core/error.h"

namespace mt::onnx_import {
namespace {

// The converter's messages span lines and carry an "[enforce fail at FILE:LINE]" prefix.
std::string converter_reason(const std::string& text) {
  std::string reason = text;
  if (reason.starts_with("[enforce fail at")) {
    const size_t end = reason.find("] ");
    if (end != std::string::npos) reason = reason.substr(end + 2);
  }
  for (char& c : reason)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  while (!reason.empty() && reason.back() == ' ') reason.pop_back();
  return reason.empty() ? "(no reason given)" : reason;
}

}  // namespace

onnx::ModelProto upgrade_opset(const onnx::ModelProto& model, int from_opset, int to_opset, const std::string& source) {
  try {
    return onnx::version_conversion::ConvertVersion(model, to_opset);
  } catch (const std::exception& e) {
    unsupported("{}: opset {} is older than {}, and ONNX's version converter cannot upgrade it: {}", source, from_opset,
                to_opset, converter_reason(e.what()));
  }
}

}  // namespace mt::onnx_import
