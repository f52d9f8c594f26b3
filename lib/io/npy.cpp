#include "lib/io/npy.h"

#include <charconv>
#include <cstring>
#include <optional>
#include <string_view>

#include "lib/core/error.h"

namespace mt {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct DescrEntry {
  std::string_view descr;
  DType dtype;
};
// What numpy writes for each supported dtype ('|' for single bytes), plus '<' spellings of them.
constexpr DescrEntry kDescrs[] = {
    {"<f4", DType::f32}, {"<f2", DType::f16}, {"|i1", DType::i8},  {"<i1", DType::i8},  {"|u1", DType::u8},
    {"<u1", DType::u8},  {"<i4", DType::i32}, {"<i8", DType::i64}, {"|b1", DType::boolean}, {"<b1", DType::boolean},
};

std::string_view descr_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return "<f4";
    case DType::f16: return "<f2";
    case DType::i8: return "|i1";
    case DType::u8: return "|u1";
    case DType::i32: return "<i4";
    case DType::i64: return "<i8";
    case DType::boolean: return "|b1";
  }
  return "";
}

// A strict reader of the Python dict literal in a .npy header.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  void parse(std::string& descr, bool& fortran_order, Shape& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_spaces();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        if (have_descr) error("'descr' appears twice");
        descr = string_literal();
        have_descr = true;
      } else if (key == "fortran_order") {
        if (have_order) error("'fortran_order' appears twice");
        fortran_order = boolean_literal();
        have_order = true;
      } else if (key == "shape") {
        if (have_shape) error("'shape' appears twice");
        shape = tuple_literal();
        have_shape = true;
      } else {
        error(fmt::format("unexpected key '{}'", key));
      }
      skip_spaces();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') error("expected ',' or '}'");
    }
    ++pos_;
    if (!have_descr || !have_order || !have_shape) error("'descr', 'fortran_order' and 'shape' are all required");
    // numpy pads with spaces and ends the header with a newline.
    skip_spaces();
    if (pos_ + 1 != text_.size() || text_[pos_] != '\n') error("unexpected text after the header dict");
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    invalid_input("{}: malformed .npy header at byte {}: {}", source_, pos_, what);
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  void expect(char c) {
    skip_spaces();
    if (peek() != c) error(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string string_literal() {
    skip_spaces();
    const char quote = peek();
    if (quote != '\'' && quote != '"') error("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos || end - pos_ > 64) error("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }
  bool boolean_literal() {
    skip_spaces();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    error("expected True or False");
  }
  Shape tuple_literal() {
    expect('(');
    Shape shape;
    while (true) {
      skip_spaces();
      if (peek() == ')') break;
      int64_t dim = 0;
      const char* begin = text_.data() + pos_;
      const char* end = text_.data() + text_.size();
      auto [next, ec] = std::from_chars(begin, end, dim);
      if (ec != std::errc() || next == begin || dim < 0) error("expected a non-negative dimension");
      pos_ += static_cast<size_t>(next - begin);
      shape.push_back(dim);
      if (shape.size() > 32) error("more than 32 dimensions");
      skip_spaces();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') error("expected ',' or ')' in the shape");
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string& source_;
  size_t pos_ = 0;
};

uint32_t read_le(const std::byte* p, size_t bytes) {
  uint32_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= static_cast<uint32_t>(p[i]) << (8 * i);
  return value;
}

}  // namespace

HostArray decode_npy(const InputBytes& input) {
  const std::string& source = input.source;
  const std::byte* bytes = input.data;
  if (input.size < kMagic.size() + 2 || std::memcmp(bytes, kMagic.data(), kMagic.size()) != 0)
    invalid_input("{}: not a .npy file (bad magic)", source);
  const int major = static_cast<int>(bytes[6]);
  const int minor = static_cast<int>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) invalid_input("{}: unsupported .npy format version {}.{}", source, major, minor);
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t prefix = 8 + length_bytes;
  if (input.size < prefix) invalid_input("{}: truncated .npy header", source);
  const size_t header_length = read_le(bytes + 8, length_bytes);
  if (header_length > input.size - prefix)
    invalid_input("{}: .npy header claims {} bytes, the file has {}", source, header_length, input.size - prefix);
  const std::string_view header(reinterpret_cast<const char*>(bytes + prefix), header_length);
  for (char c : header)
    if (static_cast<unsigned char>(c) >= 0x80) invalid_input("{}: .npy header is not ASCII", source);

  std::string descr;
  bool fortran_order = false;
  HostArray array;
  HeaderParser(header, source).parse(descr, fortran_order, array.shape);

  // A single-byte type has no byte order, whatever its prefix says.
  if (descr.size() == 3 && descr[0] == '>' && descr.substr(1) != "i1" && descr.substr(1) != "u1" &&
      descr.substr(1) != "b1")
    unsupported("{}: big-endian arrays ({}) are not supported; save with arr.astype(arr.dtype.newbyteorder('<'))",
                source, descr);
  std::optional<DType> dtype;
  for (const auto& entry : kDescrs)
    if (entry.descr == descr || (descr.size() == 3 && descr[0] == '>' && entry.descr.substr(1) == descr.substr(1)))
      dtype = entry.dtype;
  if (!dtype)
    unsupported("{}: dtype '{}' is not supported (float32, float16, int8, uint8, int32, int64, bool)", source, descr);
  array.dtype = *dtype;
  if (fortran_order && array.shape.size() > 1)
    unsupported("{}: Fortran-order arrays are not supported; save with np.save(f, np.ascontiguousarray(arr))", source);

  const auto count = checked_numel(array.shape);
  if (!count) invalid_input("{}: shape {} is too large", source, shape_str(array.shape));
  const size_t expected = static_cast<size_t>(*count) * dtype_size(array.dtype);
  const size_t available = input.size - prefix - header_length;
  if (expected != available)
    invalid_input("{}: shape {} {} needs {} data bytes, the file has {}", source, shape_str(array.shape),
                  dtype_name(array.dtype), expected, available);

  const std::byte* data = bytes + prefix + header_length;
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(array.dtype) == 0)
    array.data = ConstData(input.owner, data, expected);
  else
    array.data = ConstData::copy_of(data, expected);
  return array;
}

HostArray read_npy(const std::string& path) { return decode_npy(read_input(path)); }

std::vector<std::byte> encode_npy(DType dtype, const Shape& shape, const void* data) {
  std::string dims;
  for (int64_t d : shape) dims += fmt::format("{}, ", d);
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // (3,) for rank 1, (2, 3) otherwise
  else if (shape.size() == 1) dims.pop_back();
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr_of(dtype), dims);
  // Pad with spaces so that magic + version + length + header + '\n' is a multiple of 64; version
  // 2.0 only when the header does not fit version 1.0's 16-bit length.
  int major = 1;
  size_t prefix = 10;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  if (total - prefix > 65535) {
    major = 2;
    prefix = 12;
    total = (prefix + header.size() + 1 + 63) / 64 * 64;
  }
  header.append(total - prefix - header.size() - 1, ' ');
  header.push_back('\n');

  const size_t data_bytes = static_cast<size_t>(numel(shape)) * dtype_size(dtype);
  std::vector<std::byte> out(total + data_bytes);
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  out[6] = std::byte(major);
  out[7] = std::byte(0);
  const size_t length = header.size();
  for (size_t i = 0; i < prefix - 8; ++i) out[8 + i] = std::byte((length >> (8 * i)) & 0xff);
  std::memcpy(out.data() + prefix, header.data(), header.size());
  if (data_bytes > 0) std::memcpy(out.data() + total, data, data_bytes);
  return out;
}

void write_npy(const std::string& path, DType dtype, const Shape& shape, const void* data) {
  const auto bytes = encode_npy(dtype, shape, data);
  OutputFile out(path, /*binary=*/true);
  out.write(bytes.data(), bytes.size());
  out.commit();
}

}  // namespace mt
