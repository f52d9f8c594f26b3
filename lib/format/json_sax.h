// A strict JSON reader (RFC 8259, as nlohmann::json reads it by default) that calls a handler with
// nlohmann::json's SAX interface: null, boolean, number_integer, number_unsigned, number_float,
// string, key, start_object / end_object, start_array / end_array (each returns whether to go on).
//
// Why not nlohmann::json::sax_parse: its lexer copies every character of every token into a
// string and takes each one through its input adapter; it read MobileNetV2's 37 KB graph section
// in 0.18-0.34 ms, a fifth of that model's load + plan, where this takes 0.045-0.065 ms (both with
// a handler that does nothing). The events are nlohmann's, value for value, for every input (tests/unit/format/
// test_json_sax.cpp runs both on the same texts): the same number types (an integer that fits
// int64 when negative or uint64 otherwise, else a double; a double that is not finite is an error),
// strings decoded from escapes and checked as UTF-8 as it checks them, a UTF-8 byte order mark
// skipped at the start, nothing but whitespace after the value. Nesting is not limited here: the
// graph section's reader bounds it before parsing (the reader keeps its own stack, not the C++ one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mt {

// The scanner under parse_json_sax: tokens, without the handler (json_sax.cpp).
class JsonScanner {
 public:
  enum class Token {
    end,
    error,
    begin_object,
    end_object,
    begin_array,
    end_array,
    colon,
    comma,
    string,
    integer,
    unsigned_integer,
    floating,
    literal_true,
    literal_false,
    literal_null
  };

  JsonScanner(const char* begin, const char* end);
  Token next();
  // The last string token's decoded text (string), or the number's text (floating).
  std::string& text() { return text_; }
  int64_t integer() const { return integer_; }
  uint64_t unsigned_integer() const { return unsigned_; }
  double floating() const { return floating_; }

 private:
  Token scan_string();
  Token scan_number();
  Token scan_literal(const char* word, size_t size, Token token);

  const char* at_;
  const char* end_;
  std::string text_;
  int64_t integer_ = 0;
  uint64_t unsigned_ = 0;
  double floating_ = 0;
};

// Reads one JSON value from [begin, end) into `handler`; false where the text is not JSON or the
// handler stopped.
template <typename Handler>
bool parse_json_sax(const char* begin, const char* end, Handler* handler) {
  using Token = JsonScanner::Token;
  JsonScanner scanner(begin, end);
  std::vector<bool> open;  // per open container: whether it is an object
  enum class Next { value, key, after_value } next = Next::value;
  Token token = scanner.next();
  for (;;) {
    switch (next) {
      case Next::key:  // `token` must be an object's key
        if (token != Token::string || !handler->key(scanner.text()) || scanner.next() != Token::colon) return false;
        token = scanner.next();
        next = Next::value;
        break;
      case Next::value:  // `token` must start a value
        next = Next::after_value;
        switch (token) {
          case Token::begin_object:
            if (!handler->start_object(static_cast<size_t>(-1))) return false;
            token = scanner.next();
            if (token == Token::end_object) {
              if (!handler->end_object()) return false;
              break;
            }
            open.push_back(true);
            next = Next::key;
            break;
          case Token::begin_array:
            if (!handler->start_array(static_cast<size_t>(-1))) return false;
            token = scanner.next();
            if (token == Token::end_array) {
              if (!handler->end_array()) return false;
              break;
            }
            open.push_back(false);
            next = Next::value;
            break;
          case Token::string:
            if (!handler->string(scanner.text())) return false;
            break;
          case Token::integer:
            if (!handler->number_integer(scanner.integer())) return false;
            break;
          case Token::unsigned_integer:
            if (!handler->number_unsigned(scanner.unsigned_integer())) return false;
            break;
          case Token::floating:
            if (!handler->number_float(scanner.floating(), scanner.text())) return false;
            break;
          case Token::literal_true:
          case Token::literal_false:
            if (!handler->boolean(token == Token::literal_true)) return false;
            break;
          case Token::literal_null:
            if (!handler->null()) return false;
            break;
          default: return false;
        }
        break;
      case Next::after_value:  // a comma, or the end of the innermost container, or of the text
        if (open.empty()) return scanner.next() == Token::end;
        token = scanner.next();
        if (token == Token::comma) {
          token = scanner.next();
          next = open.back() ? Next::key : Next::value;
          break;
        }
        if (token != (open.back() ? Token::end_object : Token::end_array)) return false;
        if (!(open.back() ? handler->end_object() : handler->end_array())) return false;
        open.pop_back();
        break;
    }
  }
}

}  // namespace mt
