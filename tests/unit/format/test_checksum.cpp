// The section checksums of mt-format(5): pinned values (computed independently by
// tests/integration/mtfile.py), streaming in pieces, the CRC instruction against the portable
// tables, and the detection guarantees of the CRC32C lanes.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <vector>

#include "lib/format/checksum.h"

using namespace mt;

namespace {

const char kText[] = "The quick brown fox jumps over the lazy dog, 64 bytes or more....";

std::vector<unsigned char> random_bytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> bytes(size);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  return bytes;
}

}  // namespace

TEST_CASE("CRC32C is the Castagnoli CRC") {
  const char check[] = "123456789";
  CHECK((crc32c(0xFFFFFFFFu, check, 9) ^ 0xFFFFFFFFu) == 0xE3069283u);
  // In pieces of any size, words and bytes alike.
  CHECK(crc32c(crc32c(0xFFFFFFFFu, check, 5), check + 5, 4) == crc32c(0xFFFFFFFFu, check, 9));
}

TEST_CASE("checksums are pinned: the file format depends on them") {
  std::vector<unsigned char> counting;
  for (int r = 0; r < 4; ++r)
    for (int i = 0; i < 256; ++i) counting.push_back(static_cast<unsigned char>(i));
  counting.insert(counting.end(), {'a', 'b', 'c'});
  CHECK(checksum(kText, sizeof(kText)) == 0xd02c961f49493347ull);
  CHECK(checksum(kText, 0) == 0x1bdd911e7b647a4aull);
  CHECK(checksum(counting.data(), counting.size()) == 0xdcca3f1b4e2c4b92ull);
  CHECK(checksum(kText, sizeof(kText), ChecksumAlgorithm::multiply_rotate) == 0xaa4e78d19d8f1786ull);
  CHECK(checksum_algorithm_for(3) == ChecksumAlgorithm::multiply_rotate);
  CHECK(checksum_algorithm_for(4) == ChecksumAlgorithm::crc32c_lanes);
}

TEST_CASE("a checksum fed in pieces equals the checksum of the whole") {
  const auto bytes = random_bytes(1000, 7);
  for (auto algorithm : {ChecksumAlgorithm::multiply_rotate, ChecksumAlgorithm::crc32c_lanes}) {
    for (size_t cut : {size_t{0}, size_t{1}, size_t{10}, size_t{63}, size_t{64}, size_t{65}, size_t{500}, size_t{997}}) {
      Checksum split(algorithm);
      split.update(bytes.data(), cut);
      split.update(bytes.data() + cut, 3);
      split.update(bytes.data() + cut + 3, bytes.size() - cut - 3);
      CHECK(split.finish() == checksum(bytes.data(), bytes.size(), algorithm));
    }
  }
}

TEST_CASE("the CRC instruction and the portable tables agree") {
  MESSAGE("CRC instruction available: " << crc32c_instruction_available());
  const auto bytes = random_bytes(5000, 11);
  for (size_t size : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{63}, size_t{64}, size_t{65}, size_t{127}, size_t{4999}, size_t{5000}})
    CHECK(checksum(bytes.data(), size) == checksum_crc32c_lanes_portable(bytes.data(), size));
}

TEST_CASE("every single-byte change, and every swap of two words, changes the checksum") {
  auto bytes = random_bytes(1024 + 5, 3);
  for (auto algorithm : {ChecksumAlgorithm::multiply_rotate, ChecksumAlgorithm::crc32c_lanes}) {
    const uint64_t good = checksum(bytes.data(), bytes.size(), algorithm);
    for (size_t at = 0; at < bytes.size(); ++at)
      for (unsigned char flip : {0x01, 0x80, 0xFF}) {
        bytes[at] ^= flip;
        CHECK(checksum(bytes.data(), bytes.size(), algorithm) != good);
        bytes[at] ^= flip;
      }
    // Words swapped inside a lane, and between lanes: order matters.
    for (size_t other : {size_t{8}, size_t{64}, size_t{72}, size_t{512}}) {
      std::swap_ranges(bytes.begin(), bytes.begin() + 8, bytes.begin() + static_cast<long>(other));
      CHECK(checksum(bytes.data(), bytes.size(), algorithm) != good);
      std::swap_ranges(bytes.begin(), bytes.begin() + 8, bytes.begin() + static_cast<long>(other));
    }
    // A trailing zero byte, and the two algorithms never agree by construction.
    bytes.push_back(0);
    CHECK(checksum(bytes.data(), bytes.size(), algorithm) != good);
    bytes.pop_back();
  }
  CHECK(checksum(bytes.data(), bytes.size(), ChecksumAlgorithm::crc32c_lanes) !=
        checksum(bytes.data(), bytes.size(), ChecksumAlgorithm::multiply_rotate));
}
