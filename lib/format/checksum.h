// The 64-bit checksum of .mt sections (specified in mt-format(5)): four interleaved
// multiply-rotate lanes over 32-byte stripes, so verifying hundreds of MB of weights at load
// time costs a few milliseconds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mt {

class Checksum {
 public:
  void update(const void* data, size_t size);
  uint64_t finish() const;

 private:
  void consume_stripe(const unsigned char* stripe);
  uint64_t lanes_[4] = {0x9E3779B185EBCA87ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull, 0x85EBCA77C2B2AE63ull};
  unsigned char pending_[32] = {};
  size_t pending_size_ = 0;
  uint64_t total_ = 0;
};

uint64_t checksum(const void* data, size_t size);

}  // namespace mt
