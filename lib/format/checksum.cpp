#include "lib/format/checksum.h"

#include <algorithm>
#include <cstring>

namespace mt {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t load_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

inline uint64_t mix_lane(uint64_t lane, uint64_t word) { return rotl(lane + word * kPrime2, 31) * kPrime1; }

}  // namespace

void Checksum::consume_stripe(const unsigned char* stripe) {
  for (int lane = 0; lane < 4; ++lane) lanes_[lane] = mix_lane(lanes_[lane], load_le64(stripe + 8 * lane));
}

void Checksum::update(const void* data, size_t size) {
  auto bytes = static_cast<const unsigned char*>(data);
  total_ += size;
  if (pending_size_ > 0) {
    size_t take = std::min(size, sizeof(pending_) - pending_size_);
    std::memcpy(pending_ + pending_size_, bytes, take);
    pending_size_ += take;
    bytes += take;
    size -= take;
    if (pending_size_ < sizeof(pending_)) return;
    consume_stripe(pending_);
    pending_size_ = 0;
  }
  for (; size >= 32; bytes += 32, size -= 32) consume_stripe(bytes);
  std::memcpy(pending_, bytes, size);
  pending_size_ = size;
}

uint64_t Checksum::finish() const {
  uint64_t lanes[4] = {lanes_[0], lanes_[1], lanes_[2], lanes_[3]};
  // The tail (fewer than 32 bytes) is zero-padded to a stripe; the length is mixed in below.
  if (pending_size_ > 0) {
    unsigned char tail[32] = {};
    std::memcpy(tail, pending_, pending_size_);
    for (int lane = 0; lane < 4; ++lane) lanes[lane] = mix_lane(lanes[lane], load_le64(tail + 8 * lane));
  }
  uint64_t h = rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18);
  h ^= total_ * kPrime3;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

uint64_t checksum(const void* data, size_t size) {
  Checksum sum;
  sum.update(data, size);
  return sum.finish();
}

}  // namespace mt
