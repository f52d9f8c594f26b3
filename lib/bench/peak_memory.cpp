#include "lib/bench/peak_memory.h"

#include <sys/resource.h>

#include <charconv>
#include <string>

#include "lib/bench/text_file.h"

namespace mt::bench {

std::optional<size_t> vm_hwm_from_status(std::string_view status) {
  const auto value = find_key_value(status, "VmHWM", ':');
  if (!value) return std::nullopt;
  std::string_view text = *value;
  if (!text.ends_with("kB")) return std::nullopt;
  text = trim(text.substr(0, text.size() - 2));
  size_t kib = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), kib);
  if (error != std::errc() || end != text.data() + text.size() || kib > SIZE_MAX / 1024) return std::nullopt;
  return kib * 1024;
}

PeakMemory peak_memory() {
  PeakMemory peak;
  rusage usage{};
  // Linux reports ru_maxrss in KiB.
  if (getrusage(RUSAGE_SELF, &usage) == 0 && usage.ru_maxrss > 0) peak.max_rss_bytes = static_cast<size_t>(usage.ru_maxrss) * 1024;
  if (const auto status = read_text_file("/proc/self/status")) peak.vm_hwm_bytes = vm_hwm_from_status(*status);
  return peak;
}

}  // namespace mt::bench
