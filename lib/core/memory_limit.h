// How much memory this process may still take, and the check made before every allocation sized
// by a model (weights, planned arenas, streamed input): a model too large for the machine, or for
// its `ulimit -v`, is refused with one line naming the size instead of failing half-way or being
// killed by the kernel's out-of-memory handler.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mt {

struct MemoryAvailable {
  uint64_t bytes = 0;
  std::string limit;  // what bounds it: "under the address-space limit (ulimit -v)" or "in free memory (...)"
};

// Address space the process may still map under RLIMIT_AS (ulimit -v): the limit less the
// current mappings (/proc/self/statm); nullopt when unlimited.
std::optional<MemoryAvailable> address_space_available();

// The smaller of address_space_available() and the memory the kernel reports available
// (MemAvailable + SwapFree in /proc/meminfo); nullopt when neither is known.
std::optional<MemoryAvailable> memory_available();

// Allocations under this size are not checked: one fails cleanly in malloc if at all, and the check
// reads /proc (about 10 us), which a small model's plan would pay for every small buffer.
inline constexpr uint64_t kMemoryCheckMinBytes = uint64_t{1} << 20;

// Throws Error(failure) "not enough memory: WHAT needs N bytes (X MiB), more than the M bytes
// (Y MiB) available LIMIT" when `bytes` (from kMemoryCheckMinBytes on) exceeds memory_available() (address_space_available()
// when `file_backed`: a memory-mapped file's pages are not taken from free memory).
void check_memory_available(uint64_t bytes, std::string_view what, bool file_backed = false);

}  // namespace mt
