#include "lib/core/memory_limit.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <string_view>

#include "lib/core/error.h"

namespace mt {
namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// A small /proc file with one read into `buffer` (no stream: planning reads /proc/meminfo, where an
// ifstream and a line-by-line parse cost ~50 us, a quarter of planning a small model); "" if unreadable.
std::string_view read_proc_file(const char* path, char (&buffer)[8192]) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  size_t size = 0;
  while (size < sizeof buffer) {
    const ssize_t n = ::read(fd, buffer + size, sizeof buffer - size);
    if (n > 0) size += static_cast<size_t>(n);
    else if (n == 0 || errno != EINTR) break;
  }
  ::close(fd);
  return {buffer, size};
}

// The number after `key` at the start of a line of `text` ("MemAvailable:      123 kB"), if any.
std::optional<uint64_t> field_value(std::string_view text, std::string_view key) {
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(key)) continue;
    line.remove_prefix(key.size());
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    uint64_t value = 0;
    if (std::from_chars(line.data(), line.data() + line.size(), value).ec != std::errc()) return std::nullopt;
    return value;
  }
  return std::nullopt;
}

}  // namespace

std::optional<MemoryAvailable> address_space_available() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  char buffer[8192];
  uint64_t pages = 0;  // total program size, in pages: the first number of /proc/self/statm
  const std::string_view statm = read_proc_file("/proc/self/statm", buffer);
  std::from_chars(statm.data(), statm.data() + statm.size(), pages);
  const uint64_t mapped = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return MemoryAvailable{.bytes = limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0, .limit = "under the address-space limit (ulimit -v)"};
}

std::optional<MemoryAvailable> memory_available() {
  std::optional<MemoryAvailable> result = address_space_available();
  char buffer[8192];
  const std::string_view meminfo = read_proc_file("/proc/meminfo", buffer);
  const std::optional<uint64_t> available_kib = field_value(meminfo, "MemAvailable:");
  const uint64_t free_bytes = (available_kib.value_or(0) + field_value(meminfo, "SwapFree:").value_or(0)) * 1024;
  if (available_kib && (!result || free_bytes < result->bytes))
    result = MemoryAvailable{.bytes = free_bytes, .limit = "in free memory (MemAvailable + SwapFree)"};
  return result;
}

void check_memory_available(uint64_t bytes, std::string_view what, bool file_backed) {
  if (bytes < kMemoryCheckMinBytes) return;  // nothing (a prepacked model's weights) or little to allocate
  const std::optional<MemoryAvailable> available = file_backed ? address_space_available() : memory_available();
  if (available && bytes > available->bytes)
    fail(ExitCode::failure, "not enough memory: {} needs {} bytes ({:.1f} MiB), more than the {} bytes ({:.1f} MiB) available {}", what,
         bytes, mib(bytes), available->bytes, mib(available->bytes), available->limit);
}

}  // namespace mt
