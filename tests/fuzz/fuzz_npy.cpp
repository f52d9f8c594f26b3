// libFuzzer target: the .npy reader (decode_npy) on arbitrary bytes.
#include "lib/core/error.h"
#include "lib/io/npy.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const mt::InputBytes input = mt::fuzz::aligned_copy(data, size, "<fuzz>");
  try {
    mt::decode_npy(input);
  } catch (const mt::Error&) {
  }
  return 0;
}
