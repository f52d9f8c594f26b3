#include "lib/bench/text_file.h"

#include <fstream>
#include <sstream>

namespace mt::bench {

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return std::nullopt;
  return text.str();
}

std::string_view trim(std::string_view text) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<std::string> find_key_value(std::string_view text, std::string_view key, char separator) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const size_t sep = line.find(separator);
    if (sep != std::string_view::npos && trim(line.substr(0, sep)) == key) return std::string(trim(line.substr(sep + 1)));
    pos = end + 1;
  }
  return std::nullopt;
}

}  // namespace mt::bench
