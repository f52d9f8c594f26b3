#include "lib/import/onnx_importer.h"

#include "lib/core/error.h"

namespace mt {

Graph import_onnx(const std::string& path, const ImportOptions&) { fail(ExitCode::unsupported, "{}: ONNX import is being written", path); }

}  // namespace mt
