// libFuzzer target: the ONNX importer (import_onnx_bytes: protobuf parsing, the ONNX checker,
// translation, shape inference and validation) on arbitrary bytes.
#include <spdlog/spdlog.h>

#include "lib/core/error.h"
#include "lib/import/onnx_importer.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  spdlog::set_level(spdlog::level::off);
  const mt::InputBytes input = mt::fuzz::aligned_copy(data, size, "<fuzz>");
  try {
    mt::import_onnx_bytes(input, mt::ImportOptions{});
  } catch (const mt::Error&) {
  }
  return 0;
}
