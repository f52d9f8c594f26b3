// The machine's own limits, measured once (mt-bench --calibrate-peak) and stored per user, so that
// a profile can say how far each layer runs from them: the float32 multiply-add rate of a loop
// that does nothing else (GFLOP/s, with the widest vectors the CPU has: AVX-512F, AVX2+FMA or the
// compiler's baseline) and the bandwidth of a copy (GB/s, bytes read plus bytes written) whose
// data stays in L2, in the last-level cache and in memory (a layer's tensors are usually in a
// cache: its bytes are compared with the bandwidth of the smallest level they fit in), each on 1
// thread and on every core.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lib/bench/system_info.h"

namespace mt::bench {

// Identifies the peak file's layout.
inline constexpr const char* kPeakSchema = "mt-peak/1";

// A copy's bandwidth over a working set of `bytes` (source and destination, all threads).
struct Bandwidth {
  double bytes = 0;
  double gbytes_per_second = 0;  // 1e9 bytes read plus written per second
};

struct PeakAt {
  int threads = 1;
  double gflops_per_second = 0;   // float32, 2 per multiply-add
  std::vector<Bandwidth> levels;  // ascending working sets: L2, last-level cache (when known), memory

  // The bandwidth of the smallest level whose working set holds `bytes` (memory's past the last).
  double gbytes_per_second(double bytes) const;
};

struct MachinePeak {
  std::string cpu_model;  // as SystemInfo::cpu_model: a file from another machine is not used
  int cores = 0;
  std::string isa;         // the vectors the compute loop used: "avx512f", "avx2+fma" or "baseline"
  std::string date;        // when it was measured
  std::vector<PeakAt> at;  // by thread count, ascending, 1 first

  // The peak for `threads` threads: the one measured at that count, else the 1-thread one with its
  // rates times `threads`, each capped at the one measured at the most threads.
  PeakAt for_threads(int threads) const;
};

// Measures the peaks on 1 thread and on `threads` threads (when more than 1): a second or two.
MachinePeak measure_machine_peak(const SystemInfo& system, int threads);

// The peak file: cache_directory()/peak.json (lib/core/cache_dir.h); "" when there is none.
std::string peak_file_path();

nlohmann::json peak_json(const MachinePeak& peak);
// Throws Error(invalid_input) naming the field that is missing or out of range.
MachinePeak peak_from_json(const nlohmann::json& json);

// Writes the peak to `path` atomically, creating its directory. Throws Error on failure.
void save_machine_peak(const MachinePeak& peak, const std::string& path);

// The peak stored at `path` when it is there, valid and measured on this machine (same CPU model
// and core count); otherwise nullopt, with a warning when a file is there but unusable (damaged,
// or from another machine: calibrate again).
std::optional<MachinePeak> load_machine_peak(const std::string& path, const SystemInfo& system);

}  // namespace mt::bench
