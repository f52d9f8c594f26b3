// Small helpers for the text files under /proc and /etc that system and memory reports read:
// whole-file reads that tolerate their absence, and "key: value" line lookup.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mt::bench {

// The whole file as text, or nullopt if it cannot be read (absent on this OS, no permission).
std::optional<std::string> read_text_file(const std::string& path);

// The value of the first line "KEY<sep>VALUE" whose key, with surrounding blanks trimmed,
// equals `key`; the value is trimmed too. nullopt if no line has that key.
std::optional<std::string> find_key_value(std::string_view text, std::string_view key, char separator);

std::string_view trim(std::string_view text);

}  // namespace mt::bench
