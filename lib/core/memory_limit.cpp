#include "lib/core/memory_limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "lib/core/error.h"

namespace mt {
namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

std::optional<MemoryAvailable> address_space_available() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  uint64_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;  // total program size, in pages
  const uint64_t mapped = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return MemoryAvailable{.bytes = limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0, .limit = "under the address-space limit (ulimit -v)"};
}

std::optional<MemoryAvailable> memory_available() {
  std::optional<MemoryAvailable> result = address_space_available();
  std::ifstream meminfo("/proc/meminfo");
  uint64_t available_kib = 0, swap_kib = 0;
  bool found = false;
  for (std::string line; std::getline(meminfo, line);) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    fields >> key >> kib;
    if (key == "MemAvailable:") available_kib = kib, found = true;
    if (key == "SwapFree:") swap_kib = kib;
  }
  const uint64_t free_bytes = (available_kib + swap_kib) * 1024;
  if (found && (!result || free_bytes < result->bytes)) result = MemoryAvailable{.bytes = free_bytes, .limit = "in free memory (MemAvailable + SwapFree)"};
  return result;
}

void check_memory_available(uint64_t bytes, std::string_view what, bool file_backed) {
  if (bytes == 0) return;  // nothing to allocate (a prepacked model's weights): no need to read /proc
  const std::optional<MemoryAvailable> available = file_backed ? address_space_available() : memory_available();
  if (available && bytes > available->bytes)
    fail(ExitCode::failure, "not enough memory: {} needs {} bytes ({:.1f} MiB), more than the {} bytes ({:.1f} MiB) available {}", what,
         bytes, mib(bytes), available->bytes, mib(available->bytes), available->limit);
}

}  // namespace mt
