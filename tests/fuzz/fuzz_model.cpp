// libFuzzer target: the .mt reader (decode_model) on arbitrary bytes. Any Error is a correct
// refusal; a crash, sanitizer report, hang or huge allocation is a bug. Each input is read twice:
// as it is, and "resealed" (file size, section sizes and checksums recomputed, as mt-format(5)
// lays them out) so that mutations get past the checksums into the graph and tensor parsing.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "lib/core/error.h"
#include "lib/format/checksum.h"
#include "lib/format/model_file.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

uint64_t load64(const uint8_t* at) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | at[i];
  return value;
}
void store64(uint8_t* at, uint64_t value) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<uint8_t>(value >> (8 * i));
}

// Header fields (mt-format(5)): graph offset/size at 24/32, data offset/size at 40/48, their
// checksums at 56/64, file size at 72, the checksum of bytes [0, 88) at 88; each with the algorithm
// of the format version at 8.
std::vector<uint8_t> resealed(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  uint8_t* p = bytes.data();
  const auto algorithm = mt::checksum_algorithm_for(static_cast<uint32_t>(load64(p + 8)));
  const uint64_t graph_offset = load64(p + 24), graph_size = load64(p + 32), data_offset = load64(p + 40);
  store64(p + 72, size);
  if (graph_offset <= size && graph_size <= size - graph_offset) store64(p + 56, mt::checksum(p + graph_offset, graph_size, algorithm));
  if (data_offset <= size) {
    store64(p + 48, size - data_offset);
    store64(p + 64, mt::checksum(p + data_offset, size - data_offset, algorithm));
  }
  store64(p + 88, mt::checksum(p, 88, algorithm));
  return bytes;
}

// A model that reads back must also encode, read back again, and encode to the same bytes; a
// refusal there is a finding (abort), not a correct rejection.
void decode(const mt::InputBytes& input) {
  std::vector<std::byte> bytes;
  try {
    bytes = mt::encode_model(mt::decode_model(input));
  } catch (const mt::Error&) {
    return;
  }
  try {
    const auto again = mt::decode_model(mt::fuzz::aligned_copy(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "<re-encoded>"));
    if (mt::encode_model(again) != bytes) {
      std::fprintf(stderr, "fuzz_model: re-encoding a decoded model is not deterministic\n");
      std::abort();
    }
  } catch (const mt::Error& e) {
    std::fprintf(stderr, "fuzz_model: a decoded model does not read back after encoding: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  decode(mt::fuzz::aligned_copy(data, size, "<fuzz>"));
  if (size >= mt::kHeaderSize) {
    const std::vector<uint8_t> fixed = resealed(data, size);
    decode(mt::fuzz::aligned_copy(fixed.data(), fixed.size(), "<fuzz, resealed>"));
  }
  return 0;
}
