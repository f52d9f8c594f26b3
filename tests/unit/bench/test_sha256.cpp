// SHA-256 against the FIPS 180-4 example digests, and incremental updates in odd pieces.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "lib/bench/sha256.h"

namespace mt::bench {
namespace {

std::string hex_of(const std::string& text) { return sha256_hex(std::as_bytes(std::span(text.data(), text.size()))); }

}  // namespace

TEST_CASE("sha256 of the standard test messages") {
  CHECK(hex_of("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hex_of("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(hex_of(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 fed in pieces equals one update, across block and padding boundaries") {
  for (size_t size : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 1000u}) {
    std::string text(size, '\0');
    for (size_t i = 0; i < size; ++i) text[i] = static_cast<char>(i * 31 + 7);
    Sha256 hash;
    for (size_t pos = 0, piece = 1; pos < size; pos += piece, piece = piece % 13 + 1)
      hash.update(std::as_bytes(std::span(text.data() + pos, std::min(piece, size - pos))));
    std::string pieces;
    for (uint8_t byte : hash.finish()) pieces += fmt::format("{:02x}", byte);
    CHECK_MESSAGE(pieces == hex_of(text), "size " << size);
  }
}

}  // namespace mt::bench
