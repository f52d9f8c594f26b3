// .npy reading and writing: byte-exact agreement with numpy 1.24's np.save headers, round trips of
// every dtype, other format versions, and a clear error for each kind of bad file.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lib/core/error.h"
#include "lib/io/npy.h"

namespace mt {
namespace {

std::vector<std::byte> bytes_of(std::string_view text) {
  std::vector<std::byte> out(text.size());
  std::memcpy(out.data(), text.data(), text.size());
  return out;
}

// A .npy file with the given version and header dict, padded as numpy pads, then `data_bytes` bytes.
std::vector<std::byte> make_npy(int major, std::string dict, size_t data_bytes, bool pad = true) {
  const size_t prefix = major == 1 ? 10 : 12;
  if (pad) {
    const size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
    dict.append(total - prefix - dict.size() - 1, ' ');
  }
  dict.push_back('\n');
  std::string file = "\x93NUMPY";
  file.push_back(static_cast<char>(major));
  file.push_back('\0');
  for (size_t i = 0; i < prefix - 8; ++i) file.push_back(static_cast<char>((dict.size() >> (8 * i)) & 0xff));
  file += dict;
  file.append(data_bytes, '\x01');
  return bytes_of(file);
}

HostArray decode(const std::vector<std::byte>& bytes) {
  auto owner = std::make_shared<std::vector<std::byte>>(bytes);
  return decode_npy(InputBytes{.owner = owner, .data = owner->data(), .size = owner->size(), .source = "t.npy"});
}

void check_error(const std::vector<std::byte>& bytes, ExitCode code, const std::string& fragment) {
  try {
    decode(bytes);
    FAIL("expected an error containing: " << fragment);
  } catch (const Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.code() == code);
    CHECK(std::string(e.what()).find(fragment) != std::string::npos);
    CHECK(std::string(e.what()).rfind("t.npy: ", 0) == 0);
  }
}

}  // namespace

TEST_CASE("encode_npy writes the header numpy writes") {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const auto bytes = encode_npy(DType::f32, {2, 3}, values.data());
  REQUIRE(bytes.size() == 128 + 24);
  // numpy 1.24: np.save(f, np.zeros((2, 3), np.float32)) starts with these 128 bytes.
  std::string header = "\x93NUMPY\x01";
  header += std::string(1, '\0') + "v" + std::string(1, '\0');
  header += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header += std::string(128 - header.size() - 1, ' ') + "\n";
  CHECK(std::string(reinterpret_cast<const char*>(bytes.data()), 128) == header);
  CHECK(std::memcmp(bytes.data() + 128, values.data(), 24) == 0);

  const auto rank1 = encode_npy(DType::i64, {5}, std::vector<int64_t>(5).data());
  CHECK(std::string(reinterpret_cast<const char*>(rank1.data()) + 10, 59) ==
        "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }  ");
  const float scalar = 3;
  const auto rank0 = encode_npy(DType::f32, {}, &scalar);
  CHECK(std::string(reinterpret_cast<const char*>(rank0.data()) + 10, 56) ==
        "{'descr': '<f4', 'fortran_order': False, 'shape': (), } ");
}

TEST_CASE("npy round trip for every dtype") {
  const std::vector<std::byte> payload = [] {
    std::vector<std::byte> p(48);
    for (size_t i = 0; i < p.size(); ++i) p[i] = std::byte(i * 7);
    return p;
  }();
  for (DType dtype : {DType::f32, DType::f16, DType::i8, DType::u8, DType::i32, DType::i64, DType::boolean}) {
    INFO(dtype_name(dtype));
    const Shape shape = {2, static_cast<int64_t>(24 / dtype_size(dtype))};
    const auto bytes = encode_npy(dtype, shape, payload.data());
    CHECK((bytes.size() - 48) % 64 == 0);
    const HostArray array = decode(bytes);
    CHECK(array.dtype == dtype);
    CHECK(array.shape == shape);
    REQUIRE(array.data.size() == 48);
    CHECK(std::memcmp(array.data.data(), payload.data(), 48) == 0);
  }
  const HostArray empty = decode(encode_npy(DType::f32, {3, 0}, nullptr));
  CHECK(empty.shape == Shape{3, 0});
  CHECK(empty.data.size() == 0);
  const float scalar = 2.5f;
  const HostArray rank0 = decode(encode_npy(DType::f32, {}, &scalar));
  CHECK(rank0.shape.empty());
  CHECK(*rank0.as<float>() == 2.5f);
}

TEST_CASE("npy versions 2.0 and 3.0, compact and double-quoted headers") {
  const HostArray v2 = decode(make_npy(2, "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 12));
  CHECK(v2.dtype == DType::i32);
  CHECK(v2.shape == Shape{3});
  const HostArray v3 = decode(make_npy(3, "{\"descr\":\"|u1\",\"fortran_order\":False,\"shape\":(2,2)}", 4));
  CHECK(v3.dtype == DType::u8);
  CHECK(v3.shape == Shape{2, 2});
  // Keys in another order; big-endian prefix on a single-byte type is harmless.
  const HostArray reordered = decode(make_npy(1, "{'shape': (4,), 'fortran_order': True, 'descr': '>i1'}", 4));
  CHECK(reordered.dtype == DType::i8);
}

TEST_CASE("npy errors") {
  check_error(bytes_of("PK\x03\x04 not numpy at all"), ExitCode::invalid_input, "bad magic");
  check_error(bytes_of("\x93NUMPY"), ExitCode::invalid_input, "bad magic");
  check_error(make_npy(4, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4), ExitCode::invalid_input,
              "version 4.0");
  auto truncated_header = make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 0);
  truncated_header.resize(40);
  check_error(truncated_header, ExitCode::invalid_input, "header claims");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20), ExitCode::invalid_input,
              "needs 24 data bytes, the file has 20");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28), ExitCode::invalid_input,
              "needs 24 data bytes, the file has 28");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24), ExitCode::unsupported,
              "Fortran-order");
  check_error(make_npy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), ExitCode::unsupported,
              "big-endian");
  check_error(make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", 16), ExitCode::unsupported,
              "dtype '<f8' is not supported");
  check_error(make_npy(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", 24), ExitCode::unsupported,
              "dtype '<U3'");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False}", 4), ExitCode::invalid_input, "all required");
  check_error(make_npy(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4),
              ExitCode::invalid_input, "appears twice");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}", 4),
              ExitCode::invalid_input, "unexpected key 'extra'");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': false, 'shape': ()}", 4), ExitCode::invalid_input,
              "True or False");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", 4), ExitCode::invalid_input,
              "non-negative");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", 24), ExitCode::invalid_input,
              "expected ',' or ')'");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()} junk", 4), ExitCode::invalid_input,
              "after the header");
  // Without numpy's padding the header is still well formed.
  CHECK(decode(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4, /*pad=*/false)).shape.empty());
  // A huge shape is rejected before anything is allocated.
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000, 1000000), }", 4),
              ExitCode::invalid_input, "too large");
  check_error(make_npy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (10000000, 100000), }", 4),
              ExitCode::invalid_input, "needs 4000000000000 data bytes");
}

TEST_CASE("read_npy and write_npy through a file") {
  const std::string path = "/tmp/mt_test_npy_" + std::to_string(::getpid()) + ".npy";
  const std::vector<int32_t> values = {7, -8, 9};
  write_npy(path, DType::i32, {3}, values.data());
  const HostArray array = read_npy(path);
  CHECK(array.dtype == DType::i32);
  CHECK(array.as<int32_t>()[1] == -8);
  std::remove(path.c_str());
  CHECK_THROWS_AS(read_npy(path), Error);
}

}  // namespace mt
