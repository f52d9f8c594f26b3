// Peak resident memory of this process, as the kernel counts it two ways: getrusage's
// ru_maxrss and /proc/self/status's VmHWM (the high-water mark of the resident set).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace mt::bench {

struct PeakMemory {
  size_t max_rss_bytes = 0;                // getrusage(RUSAGE_SELF).ru_maxrss
  std::optional<size_t> vm_hwm_bytes;      // nullopt where /proc/self/status has no VmHWM
};

PeakMemory peak_memory();

// VmHWM from /proc/self/status text ("VmHWM:    12345 kB") in bytes; nullopt if absent or
// malformed.
std::optional<size_t> vm_hwm_from_status(std::string_view status);

}  // namespace mt::bench
