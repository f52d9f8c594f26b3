#include "lib/format/checksum.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define MT_CRC32C_X86 1
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#define MT_CRC32C_ARM 1
#endif

namespace mt {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr uint32_t kCrcInit = 0xFFFFFFFFu;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t load_le64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// ---- multiply_rotate (formats 1 to 3) ----

inline uint64_t mix_lane(uint64_t lane, uint64_t word) { return rotl(lane + word * kPrime2, 31) * kPrime1; }

void multiply_rotate_stripes(uint64_t* lanes, const unsigned char* bytes, size_t count) {
  for (size_t s = 0; s < count; ++s, bytes += 32)
    for (int lane = 0; lane < 4; ++lane) lanes[lane] = mix_lane(lanes[lane], load_le64(bytes + 8 * lane));
}

uint64_t multiply_rotate_finish(const uint64_t* state, const unsigned char* pending, size_t pending_size, uint64_t total) {
  uint64_t lanes[4] = {state[0], state[1], state[2], state[3]};
  // The tail (fewer than 32 bytes) is zero-padded to a stripe; the length is mixed in below.
  if (pending_size > 0) {
    unsigned char tail[32] = {};
    std::memcpy(tail, pending, pending_size);
    multiply_rotate_stripes(lanes, tail, 1);
  }
  uint64_t h = rotl(lanes[0], 1) + rotl(lanes[1], 7) + rotl(lanes[2], 12) + rotl(lanes[3], 18);
  h ^= total * kPrime3;
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

// ---- crc32c_lanes (format 4 on) ----

// Slicing-by-8 tables of the reflected Castagnoli polynomial: table[k][b] is the CRC of byte b
// followed by k zero bytes, so one 8-byte word costs eight lookups.
constexpr std::array<std::array<uint32_t, 256>, 8> make_crc_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    t[0][b] = c;
  }
  for (size_t k = 1; k < 8; ++k)
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  return t;
}
constexpr auto kCrcTables = make_crc_tables();

inline uint32_t crc_byte(uint32_t crc, unsigned char byte) { return (crc >> 8) ^ kCrcTables[0][(crc ^ byte) & 0xff]; }

// What the CRC instruction computes for one little-endian word.
inline uint32_t crc_word_portable(uint32_t crc, uint64_t word) {
  const uint64_t x = word ^ crc;
  return kCrcTables[7][x & 0xff] ^ kCrcTables[6][(x >> 8) & 0xff] ^ kCrcTables[5][(x >> 16) & 0xff] ^
         kCrcTables[4][(x >> 24) & 0xff] ^ kCrcTables[3][(x >> 32) & 0xff] ^ kCrcTables[2][(x >> 40) & 0xff] ^
         kCrcTables[1][(x >> 48) & 0xff] ^ kCrcTables[0][x >> 56];
}

using StripesFn = void (*)(uint64_t* lanes, const unsigned char* bytes, size_t count);

void crc_stripes_portable(uint64_t* lanes, const unsigned char* bytes, size_t count) {
  for (size_t s = 0; s < count; ++s, bytes += 64)
    for (int lane = 0; lane < 8; ++lane)
      lanes[lane] = crc_word_portable(static_cast<uint32_t>(lanes[lane]), load_le64(bytes + 8 * lane));
}

#if MT_CRC32C_X86 || MT_CRC32C_ARM
static_assert(std::endian::native == std::endian::little, "the CRC instruction path loads words in host order");
#if MT_CRC32C_X86
#define MT_CRC_TARGET __attribute__((target("sse4.2")))
MT_CRC_TARGET inline uint64_t crc_word_instruction(uint64_t crc, uint64_t word) { return _mm_crc32_u64(crc, word); }
#else
#define MT_CRC_TARGET
inline uint64_t crc_word_instruction(uint64_t crc, uint64_t word) { return __crc32cd(static_cast<uint32_t>(crc), word); }
#endif
// Eight independent chains hide the instruction's 3-cycle latency: one word a cycle.
MT_CRC_TARGET void crc_stripes_instruction(uint64_t* lanes, const unsigned char* bytes, size_t count) {
  uint64_t c0 = lanes[0], c1 = lanes[1], c2 = lanes[2], c3 = lanes[3], c4 = lanes[4], c5 = lanes[5], c6 = lanes[6], c7 = lanes[7];
  for (size_t s = 0; s < count; ++s, bytes += 64) {
    uint64_t w[8];
    std::memcpy(w, bytes, 64);  // little-endian hosts only reach this path
    c0 = crc_word_instruction(c0, w[0]);
    c1 = crc_word_instruction(c1, w[1]);
    c2 = crc_word_instruction(c2, w[2]);
    c3 = crc_word_instruction(c3, w[3]);
    c4 = crc_word_instruction(c4, w[4]);
    c5 = crc_word_instruction(c5, w[5]);
    c6 = crc_word_instruction(c6, w[6]);
    c7 = crc_word_instruction(c7, w[7]);
  }
  lanes[0] = c0, lanes[1] = c1, lanes[2] = c2, lanes[3] = c3, lanes[4] = c4, lanes[5] = c5, lanes[6] = c6, lanes[7] = c7;
}
#endif

bool instruction_available() {
#if MT_CRC32C_X86
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
#elif MT_CRC32C_ARM
  return true;
#else
  return false;
#endif
}

StripesFn best_crc_stripes() {
#if MT_CRC32C_X86 || MT_CRC32C_ARM
  if (instruction_available()) return crc_stripes_instruction;
#endif
  return crc_stripes_portable;
}

// A bijection of 64-bit values (MurmurHash3's finaliser).
inline uint64_t fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return x;
}

uint64_t crc32c_lanes_finish(const uint64_t* state, const unsigned char* pending, size_t pending_size, uint64_t total) {
  uint32_t lanes[8];
  for (int i = 0; i < 8; ++i) lanes[i] = static_cast<uint32_t>(state[i]);
  // The last stripe's whole words go to their lanes, the bytes after them one by one to the next lane.
  const size_t words = pending_size / 8;
  for (size_t i = 0; i < words; ++i) lanes[i] = crc_word_portable(lanes[i], load_le64(pending + 8 * i));
  if (pending_size % 8 != 0) lanes[words] = crc32c(lanes[words], pending + 8 * words, pending_size % 8);
  // Each lane enters the sum through a bijection of (lane index, CRC): a change to one lane's CRC
  // always changes the sum, and the final mix is a bijection of the sum for a given length.
  uint64_t sum = 0;
  for (uint64_t i = 0; i < 8; ++i) sum += fmix64((i << 32) | lanes[i]);
  return fmix64(sum ^ (total * kPrime3));
}

}  // namespace

ChecksumAlgorithm checksum_algorithm_for(uint32_t format_version) {
  return format_version >= 4 ? ChecksumAlgorithm::crc32c_lanes : ChecksumAlgorithm::multiply_rotate;
}

Checksum::Checksum(ChecksumAlgorithm algorithm) : algorithm_(algorithm) {
  if (algorithm_ == ChecksumAlgorithm::multiply_rotate) {
    const uint64_t init[4] = {kPrime1, kPrime2, kPrime3, 0x85EBCA77C2B2AE63ull};
    std::copy(init, init + 4, lanes_);
  } else {
    std::fill(lanes_, lanes_ + 8, kCrcInit);
  }
}

size_t Checksum::stripe_size() const { return algorithm_ == ChecksumAlgorithm::multiply_rotate ? 32 : 64; }

void Checksum::consume_stripes(const unsigned char* bytes, size_t count) {
  if (algorithm_ == ChecksumAlgorithm::multiply_rotate) {
    multiply_rotate_stripes(lanes_, bytes, count);
  } else {
    static const StripesFn best = best_crc_stripes();
    (portable_ ? crc_stripes_portable : best)(lanes_, bytes, count);
  }
}

void Checksum::update(const void* data, size_t size) {
  auto bytes = static_cast<const unsigned char*>(data);
  const size_t stripe = stripe_size();
  total_ += size;
  if (pending_size_ > 0) {
    const size_t take = std::min(size, stripe - pending_size_);
    std::memcpy(pending_ + pending_size_, bytes, take);
    pending_size_ += take;
    bytes += take;
    size -= take;
    if (pending_size_ < stripe) return;
    consume_stripes(pending_, 1);
    pending_size_ = 0;
  }
  consume_stripes(bytes, size / stripe);
  bytes += size / stripe * stripe;
  size %= stripe;
  std::memcpy(pending_, bytes, size);
  pending_size_ = size;
}

uint64_t Checksum::finish() const {
  return algorithm_ == ChecksumAlgorithm::multiply_rotate ? multiply_rotate_finish(lanes_, pending_, pending_size_, total_)
                                                          : crc32c_lanes_finish(lanes_, pending_, pending_size_, total_);
}

uint64_t checksum(const void* data, size_t size, ChecksumAlgorithm algorithm) {
  Checksum sum(algorithm);
  sum.update(data, size);
  return sum.finish();
}

uint32_t crc32c(uint32_t state, const void* data, size_t size) {
  auto bytes = static_cast<const unsigned char*>(data);
  for (; size >= 8; bytes += 8, size -= 8) state = crc_word_portable(state, load_le64(bytes));
  for (; size > 0; ++bytes, --size) state = crc_byte(state, *bytes);
  return state;
}

bool crc32c_instruction_available() { return instruction_available(); }

uint64_t checksum_crc32c_lanes_portable(const void* data, size_t size) {
  Checksum sum(ChecksumAlgorithm::crc32c_lanes);
  sum.portable_ = true;
  sum.update(data, size);
  return sum.finish();
}

}  // namespace mt
