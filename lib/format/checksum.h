// The 64-bit checksums of .mt sections (specified in mt-format(5)).
//
// crc32c_lanes (format 4 on): eight CRC32C lanes over interleaved 8-byte words, combined through a
// bijective mix. The CRC instruction (SSE4.2; ARMv8 where the compiler targets it) takes 8 bytes a
// cycle on independent lanes, so verifying the weights runs at memory speed. Any corruption confined
// to one lane's words (any single byte, any burst of up to 32 bits inside an 8-byte word) changes
// exactly one lane's CRC and is detected with certainty, not just with probability 1 - 2^-64.
//
// multiply_rotate (formats 1 to 3): four multiply-rotate lanes over 32-byte stripes, half the
// speed of crc32c_lanes in cache (docs/benchmarks.md); kept to read older files.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mt {

enum class ChecksumAlgorithm { multiply_rotate, crc32c_lanes };

// The algorithm a file of this format version is sealed with.
ChecksumAlgorithm checksum_algorithm_for(uint32_t format_version);

class Checksum {
 public:
  explicit Checksum(ChecksumAlgorithm algorithm = ChecksumAlgorithm::crc32c_lanes);
  void update(const void* data, size_t size);
  uint64_t finish() const;

 private:
  static constexpr size_t kStripe = 64;  // the larger stripe of the two algorithms
  size_t stripe_size() const;
  void consume_stripes(const unsigned char* bytes, size_t count);

  friend uint64_t checksum_crc32c_lanes_portable(const void* data, size_t size);

  ChecksumAlgorithm algorithm_;
  bool portable_ = false;  // never use the CRC instruction (tests compare the two paths)
  uint64_t lanes_[8] = {};
  unsigned char pending_[kStripe] = {};
  size_t pending_size_ = 0;
  uint64_t total_ = 0;
};

uint64_t checksum(const void* data, size_t size, ChecksumAlgorithm algorithm = ChecksumAlgorithm::crc32c_lanes);

// CRC32C (Castagnoli, reflected) of `size` bytes continuing from `state`, without the customary
// initial and final inversion: crc32c(~0u, "123456789", 9) == ~0xE3069283.
uint32_t crc32c(uint32_t state, const void* data, size_t size);

// For tests: whether the CRC instruction is used here, and the checksum computed without it.
bool crc32c_instruction_available();
uint64_t checksum_crc32c_lanes_portable(const void* data, size_t size);

}  // namespace mt
