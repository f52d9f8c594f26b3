// SHA-256 (FIPS 180-4) of a model file's bytes: the checksum a benchmark report records, so a
// result can be matched to the exact model (`sha256sum model.mt` prints the same digest).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace mt::bench {

class Sha256 {
 public:
  void update(std::span<const std::byte> data);
  std::array<uint8_t, 32> finish();  // once; the object is spent afterwards

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<uint8_t, 64> pending_{};
  size_t pending_size_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hex digest, 64 characters.
std::string sha256_hex(std::span<const std::byte> data);

}  // namespace mt::bench
