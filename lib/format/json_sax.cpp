#include "lib/format/json_sax.h"

#include <locale.h>
#include <stdlib.h>

#include <charconv>
#include <cmath>

namespace mt {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// The bytes of a well-formed UTF-8 sequence starting at p (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), 0 if there is none before `end`. p[0] >= 0x80.
size_t utf8_sequence(const unsigned char* p, const unsigned char* end) {
  const unsigned char b = p[0];
  size_t size = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (b >= 0xC2 && b <= 0xDF) size = 2;
  else if (b == 0xE0) size = 3, low = 0xA0;
  else if (b >= 0xE1 && b <= 0xEC) size = 3;
  else if (b == 0xED) size = 3, high = 0x9F;
  else if (b >= 0xEE && b <= 0xEF) size = 3;
  else if (b == 0xF0) size = 4, low = 0x90;
  else if (b >= 0xF1 && b <= 0xF3) size = 4;
  else if (b == 0xF4) size = 4, high = 0x8F;
  else return 0;
  if (static_cast<size_t>(end - p) < size || p[1] < low || p[1] > high) return 0;
  for (size_t i = 2; i < size; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return size;
}

// strtod in the C locale: the value of a decimal number that std::from_chars finds out of range
// (an underflow to a subnormal or zero, or an overflow to infinity).
double strtod_c(const std::string& text) {
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(nullptr));
  return strtod_l(text.c_str(), nullptr, c_locale);
}

}  // namespace

JsonScanner::JsonScanner(const char* begin, const char* end) : at_(begin), end_(end) {
  // A UTF-8 byte order mark is skipped; a partial one is an error (as nlohmann's lexer does).
  if (at_ != end_ && static_cast<unsigned char>(*at_) == 0xEF) {
    if (end_ - at_ >= 3 && static_cast<unsigned char>(at_[1]) == 0xBB && static_cast<unsigned char>(at_[2]) == 0xBF) {
      at_ += 3;
    } else {
      at_ = nullptr;  // next() reports an error
    }
  }
}

JsonScanner::Token JsonScanner::next() {
  if (at_ == nullptr) return Token::error;
  while (at_ != end_ && is_space(*at_)) ++at_;
  if (at_ == end_) return Token::end;
  switch (*at_) {
    case '{': ++at_; return Token::begin_object;
    case '}': ++at_; return Token::end_object;
    case '[': ++at_; return Token::begin_array;
    case ']': ++at_; return Token::end_array;
    case ':': ++at_; return Token::colon;
    case ',': ++at_; return Token::comma;
    case '"': return scan_string();
    case 't': return scan_literal("true", 4, Token::literal_true);
    case 'f': return scan_literal("false", 5, Token::literal_false);
    case 'n': return scan_literal("null", 4, Token::literal_null);
    default:
      if (*at_ == '-' || is_digit(*at_)) return scan_number();
      return Token::error;
  }
}

JsonScanner::Token JsonScanner::scan_literal(const char* word, size_t size, Token token) {
  if (static_cast<size_t>(end_ - at_) < size) return Token::error;
  for (size_t i = 0; i < size; ++i)
    if (at_[i] != word[i]) return Token::error;
  at_ += size;
  return token;
}

JsonScanner::Token JsonScanner::scan_string() {
  text_.clear();
  ++at_;  // the opening quote
  const auto* p = reinterpret_cast<const unsigned char*>(at_);
  const auto* end = reinterpret_cast<const unsigned char*>(end_);
  for (;;) {
    // A run of plain ASCII, copied at once.
    const unsigned char* run = p;
    while (p != end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') ++p;
    text_.append(reinterpret_cast<const char*>(run), static_cast<size_t>(p - run));
    if (p == end) return Token::error;
    if (*p == '"') {
      at_ = reinterpret_cast<const char*>(p + 1);
      return Token::string;
    }
    if (*p < 0x20) return Token::error;  // control characters must be escaped
    if (*p >= 0x80) {
      const size_t size = utf8_sequence(p, end);
      if (size == 0) return Token::error;
      text_.append(reinterpret_cast<const char*>(p), size);
      p += size;
      continue;
    }
    // An escape.
    if (end - p < 2) return Token::error;
    const char e = static_cast<char>(p[1]);
    p += 2;
    switch (e) {
      case '"': text_ += '"'; continue;
      case '\\': text_ += '\\'; continue;
      case '/': text_ += '/'; continue;
      case 'b': text_ += '\b'; continue;
      case 'f': text_ += '\f'; continue;
      case 'n': text_ += '\n'; continue;
      case 'r': text_ += '\r'; continue;
      case 't': text_ += '\t'; continue;
      case 'u': break;
      default: return Token::error;
    }
    auto hex4 = [&](uint32_t& code) {
      if (end - p < 4) return false;
      code = 0;
      for (int i = 0; i < 4; ++i) {
        const int v = hex_value(static_cast<char>(p[i]));
        if (v < 0) return false;
        code = code * 16 + static_cast<uint32_t>(v);
      }
      p += 4;
      return true;
    };
    uint32_t code = 0;
    if (!hex4(code)) return Token::error;
    if (code >= 0xDC00 && code <= 0xDFFF) return Token::error;  // a low surrogate first
    if (code >= 0xD800 && code <= 0xDBFF) {                     // a high one: its low one must follow
      uint32_t low = 0;
      if (end - p < 2 || p[0] != '\\' || p[1] != 'u') return Token::error;
      p += 2;
      if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return Token::error;
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(text_, code);
  }
}

JsonScanner::Token JsonScanner::scan_number() {
  const char* start = at_;
  const char* p = at_;
  const bool negative = *p == '-';
  if (negative) ++p;
  if (p == end_ || !is_digit(*p)) return Token::error;
  if (*p == '0') {
    ++p;  // no leading zeros: a digit after it starts another token
  } else {
    while (p != end_ && is_digit(*p)) ++p;
  }
  bool integral = true;
  if (p != end_ && *p == '.') {
    ++p;
    if (p == end_ || !is_digit(*p)) return Token::error;
    while (p != end_ && is_digit(*p)) ++p;
    integral = false;
  }
  if (p != end_ && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p != end_ && (*p == '+' || *p == '-')) ++p;
    if (p == end_ || !is_digit(*p)) return Token::error;
    while (p != end_ && is_digit(*p)) ++p;
    integral = false;
  }
  at_ = p;
  if (integral) {
    // An integer that fits int64 (negative) or uint64 (otherwise); larger ones are read as doubles.
    uint64_t magnitude = 0;
    bool fits = true;
    for (const char* d = negative ? start + 1 : start; d != p && fits; ++d) {
      const auto digit = static_cast<uint64_t>(*d - '0');
      if (magnitude > (UINT64_MAX - digit) / 10) fits = false;
      else magnitude = magnitude * 10 + digit;
    }
    if (fits && !negative) {
      unsigned_ = magnitude;
      return Token::unsigned_integer;
    }
    if (fits && magnitude <= uint64_t{1} << 63) {
      integer_ = magnitude == uint64_t{1} << 63 ? INT64_MIN : -static_cast<int64_t>(magnitude);
      return Token::integer;
    }
  }
  text_.assign(start, p);
  const auto [end, error] = std::from_chars(start, p, floating_);
  if (error == std::errc::result_out_of_range) floating_ = strtod_c(text_);
  else if (error != std::errc() || end != p) return Token::error;
  return std::isfinite(floating_) ? Token::floating : Token::error;
}

}  // namespace mt
