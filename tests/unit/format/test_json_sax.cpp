// The graph section's JSON reader (lib/format/json_sax.h) against nlohmann::json::sax_parse, the
// reader it replaces: on every text, the same verdict and the same events, value for value (number
// types and bits, decoded strings, keys). Texts: hand-written edge cases of the grammar, escapes,
// UTF-8 and numbers; texts shaped as graph sections with random values; and mutations of them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "lib/format/json_sax.h"

using namespace mt;
using json = nlohmann::json;

namespace {

// Records every event as a line of text; stops (returns false) at the event numbered `stop_at`.
struct Recorder {
  std::vector<std::string> events;
  size_t stop_at = SIZE_MAX;
  bool add(std::string event) {
    events.push_back(std::move(event));
    return events.size() != stop_at;
  }
  bool null() { return add("null"); }
  bool boolean(bool v) { return add(v ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) { return add("int " + std::to_string(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add("uint " + std::to_string(v)); }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    return add("float " + std::to_string(bits) + " " + text);
  }
  bool string(json::string_t& v) { return add("string " + v); }
  bool binary(json::binary_t&) { return add("binary"); }
  bool start_object(size_t) { return add("{"); }
  bool end_object() { return add("}"); }
  bool start_array(size_t) { return add("["); }
  bool end_array() { return add("]"); }
  bool key(json::string_t& v) { return add("key " + v); }
  bool parse_error(size_t, const std::string&, const json::exception&) { return false; }
};

struct Outcome {
  bool ok;
  std::vector<std::string> events;
};

Outcome ours(const std::string& text, size_t stop_at = SIZE_MAX) {
  Recorder r;
  r.stop_at = stop_at;
  const bool ok = parse_json_sax(text.data(), text.data() + text.size(), &r);
  return {ok, r.events};
}

Outcome theirs(const std::string& text, size_t stop_at = SIZE_MAX) {
  Recorder r;
  r.stop_at = stop_at;
  const bool ok = json::sax_parse(text.data(), text.data() + text.size(), &r);
  return {ok, r.events};
}

// The same verdict; on success the same events. (On failure nlohmann may have reported a value
// before finding the error after it, or not: only the verdict is compared.)
void check_same(const std::string& text) {
  CAPTURE(text);
  const Outcome a = ours(text), b = theirs(text);
  REQUIRE(a.ok == b.ok);
  if (a.ok) CHECK(a.events == b.events);
}

}  // namespace

TEST_CASE("json_sax: accepts and rejects what nlohmann does, with the same events") {
  const char* texts[] = {
      // structure
      "{}",
      "[]",
      "[[]]",
      "{\"a\":{}}",
      "{\"a\":[1,2,{\"b\":null}]}",
      " \t\r\n[ 1 , 2 ]\n ",
      "[1,]",
      "[,1]",
      "{,}",
      "{\"a\"}",
      "{\"a\":}",
      "{\"a\" 1}",
      "{\"a\":1,}",
      "{1:2}",
      "[1 2]",
      "[",
      "]",
      "{",
      "}",
      "",
      " ",
      "[1]]",
      "[1]x",
      "[1] [2]",
      "\"a\":1",
      "{\"a\":1}}",
      "[{]",
      "[{}",
      "{\"\":0}",
      "{\"a\":1,\"a\":2}",
      // literals
      "true",
      "false",
      "null",
      "tru",
      "nul",
      "True",
      "[true,false,null]",
      "nullx",
      "[nan]",
      "[NaN]",
      "[Infinity]",
      // numbers
      "0",
      "-0",
      "1",
      "-1",
      "01",
      "-01",
      "00",
      "1.",
      ".5",
      "-",
      "+1",
      "1e",
      "1e+",
      "1E-2",
      "1e5",
      "1.5e-3",
      "-0.0",
      "0e0",
      "123456789012345678",
      "9223372036854775807",
      "9223372036854775808",
      "-9223372036854775808",
      "-9223372036854775809",
      "18446744073709551615",
      "18446744073709551616",
      "99999999999999999999999",
      "1e308",
      "1e309",
      "-1e309",
      "1e-320",
      "1e-400",
      "2.2250738585072011e-308",
      "0.1",
      "3.141592653589793238",
      "[1x]",
      "[1.5.2]",
      "[--1]",
      "[1e5e5]",
      "[0x10]",
      "4.9406564584124654e-324",
      "1.7976931348623157e308",
      "1.7976931348623159e308",
      // strings and escapes
      "\"\"",
      "\"abc\"",
      "\"a\\\"b\"",
      "\"\\\\\"",
      "\"\\/\"",
      "\"\\b\\f\\n\\r\\t\"",
      "\"\\x\"",
      "\"\\u0041\"",
      "\"\\u00e9\\u00E9\"",
      "\"\\u20ac\"",
      "\"\\ud83d\\ude00\"",
      "\"\\ud83d\"",
      "\"\\ude00\"",
      "\"\\ud83d\\u0041\"",
      "\"\\ud83dx\"",
      "\"\\u12\"",
      "\"\\u12g4\"",
      "\"\\u0000\"",
      "\"abc",
      "\"a\nb\"",
      "\"a\tb\"",
      "\"\x7f\"",
      "\"\\",
      "\"\\u",
      // UTF-8
      "\"\xc3\xa9\"",
      "\"\xe2\x82\xac\"",
      "\"\xf0\x9f\x98\x80\"",
      "\"\xc0\xaf\"",
      "\"\xc1\xbf\"",
      "\"\xe0\x80\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "\"\xf5\x80\x80\x80\"",
      "\"\x80\"",
      "\"\xc3\"",
      "\"\xe2\x82\"",
      "\"\xff\"",
      "\"\xef\xbf\xbf\"",
      "\"\xf4\x8f\xbf\xbf\"",
      // byte order mark
      "\xef\xbb\xbf[1]",
      "\xef\xbb[1]",
      "\xef[1]",
      "[1]\xef\xbb\xbf",
      // comments and other characters
      "[1]//x",
      "/*x*/[1]",
      "[1,/*x*/2]",
      "['a']",
      "[\"a\"\"b\"]",
  };
  for (const char* text : texts) check_same(text);
  check_same(std::string("[1,\0]", 5));
  check_same(std::string("\"a\0b\"", 5));
  check_same(std::string(200, '[') + std::string(200, ']'));
}

TEST_CASE("json_sax: stops when the handler does, as nlohmann does") {
  const std::string text = "{\"a\":[1,2.5,\"x\",{\"b\":true}],\"c\":null}";
  const size_t events = theirs(text).events.size();
  for (size_t stop = 1; stop <= events; ++stop) {
    CAPTURE(stop);
    const Outcome a = ours(text, stop), b = theirs(text, stop);
    CHECK(!a.ok);
    CHECK(a.ok == b.ok);
    CHECK(a.events == b.events);
  }
}

namespace {

// A graph section's shape (tensors with quantization tables, nodes with attributes of every type,
// metadata), with random values: numbers of every range and form, strings with escapes and UTF-8.
std::string random_section(std::mt19937& rng) {
  auto random_double = [&] {
    for (;;) {
      const uint64_t bits = (uint64_t{rng()} << 32) | rng();
      double v = 0;
      std::memcpy(&v, &bits, sizeof v);
      if (std::isfinite(v)) return rng() % 2 ? v : static_cast<double>(static_cast<int>(rng() % 2001) - 1000) / 8;
    }
  };
  auto random_int = [&]() -> json {
    switch (rng() % 3) {
      case 0: return static_cast<int64_t>(rng() % 1000) - 500;
      case 1: return static_cast<int64_t>((uint64_t{rng()} << 32) | rng());
      default: return (uint64_t{rng()} << 32) | rng();
    }
  };
  const char* pieces[] = {"conv", "/features.3/Conv_output_0", "é", "€", "😀", "\\", "\"", "\n\t", "\x01", " ", "/"};
  auto random_string = [&] {
    std::string out;
    for (size_t i = rng() % 5; i > 0; --i) out += pieces[rng() % (sizeof pieces / sizeof *pieces)];
    return out;
  };
  json section = {{"inputs", {"input"}}, {"outputs", {"output"}}, {"tensors", json::array()}, {"nodes", json::array()}};
  for (int i = 0; i < 40; ++i) {
    json tensor = {{"name", random_string()},
                   {"dtype", "float32"},
                   {"shape", {1, rng() % 512, 7, 7}},
                   {"offset", rng() % 100000 * 64},
                   {"size", rng()}};
    if (rng() % 3 == 0)
      tensor["quant"] = {
          {"axis", 0}, {"scales", {random_double(), random_double()}}, {"zero_points", {random_int(), 0}}};
    section["tensors"].push_back(tensor);
    json attrs = {
        {"strides", {2, 2}},       {"act_max", random_double()}, {"alpha", random_double()}, {"group", random_int()},
        {"mode", random_string()}, {"empty", json::array()},     {"flag", rng() % 2 == 0},   {"none", nullptr}};
    section["nodes"].push_back({{"name", random_string()},
                                {"op", "conv2d"},
                                {"inputs", {random_string(), ""}},
                                {"outputs", {random_string()}},
                                {"attrs", attrs}});
  }
  section["metadata"] = {{"provenance", {{{"tool", "mt-convert"}, {"args", {random_string()}}}}},
                         {"nested", {{"deep", {{{"x", {}}}}}}}};
  return section.dump(rng() % 2 ? -1 : 1);
}

}  // namespace

TEST_CASE("json_sax: graph sections with random values, and mutations of them") {
  std::mt19937 rng(12345);
  std::vector<std::string> sections;
  for (int i = 0; i < 20; ++i) sections.push_back(random_section(rng));
  for (const std::string& section : sections) {
    const Outcome a = ours(section);
    REQUIRE(a.ok);
    CHECK(a.events == theirs(section).events);
  }
  // Mutations: a byte replaced by one of JSON's own characters or any byte, a byte removed, the
  // text cut short. Most are refused; those accepted must give the same events.
  const char special[] = "{}[]:,\"\\-+.eE0123456789tfnu \n";
  size_t accepted = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text = sections[static_cast<size_t>(i) % sections.size()];
    const size_t at = rng() % text.size();
    switch (rng() % 4) {
      case 0: text[at] = special[rng() % (sizeof special - 1)]; break;
      case 1: text[at] = static_cast<char>(rng()); break;
      case 2: text.erase(at, 1); break;
      default: text.resize(at); break;
    }
    CAPTURE(text);
    const Outcome a = ours(text), b = theirs(text);
    REQUIRE(a.ok == b.ok);
    if (a.ok) {
      ++accepted;
      REQUIRE(a.events == b.events);
    }
  }
  CHECK(accepted > 100);  // many mutations keep the text valid (a digit for a digit, a space for a space)
}
