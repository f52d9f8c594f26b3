#include "lib/bench/machine_peak.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <thread>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <spdlog/spdlog.h>

#include "lib/core/cache_dir.h"
#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/core/memory_limit.h"

namespace mt::bench {
namespace {

using Clock = std::chrono::steady_clock;

// 16 independent multiply-add chains (twice what two FMA pipes of 4 cycles' latency need), `steps`
// times each: returns their sum so that the loop is not optimised away. Operations: steps x 16 x
// lanes x 2.
constexpr int kChains = 16;

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float chains_avx512(uint64_t steps) {
  __m512 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm512_set1_ps(0.001f * static_cast<float>(j));
  const __m512 m = _mm512_set1_ps(0.9999999f), a = _mm512_set1_ps(1e-7f);
  for (uint64_t i = 0; i < steps; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
  }
  __m512 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm512_add_ps(sum, acc[j]);
  float out[16];
  _mm512_storeu_ps(out, sum);
  return out[0] + out[15];
}

__attribute__((target("avx2,fma"))) float chains_avx2(uint64_t steps) {
  __m256 acc[kChains];
  for (int j = 0; j < kChains; ++j) acc[j] = _mm256_set1_ps(0.001f * static_cast<float>(j));
  const __m256 m = _mm256_set1_ps(0.9999999f), a = _mm256_set1_ps(1e-7f);
  for (uint64_t i = 0; i < steps; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kChains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
  }
  float out[8];
  __m256 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = _mm256_add_ps(sum, acc[j]);
  _mm256_storeu_ps(out, sum);
  return out[0] + out[7];
}
#endif

// The compiler's baseline vectors (SSE2 on x86-64, NEON on aarch64): 4 lanes per chain, written
// as loops it vectorises.
float chains_baseline(uint64_t steps) {
  alignas(64) float acc[kChains][4];
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < 4; ++l) acc[j][l] = 0.001f * static_cast<float>(j + l);
  for (uint64_t i = 0; i < steps; ++i)
    for (int j = 0; j < kChains; ++j)
      for (int l = 0; l < 4; ++l) acc[j][l] = acc[j][l] * 0.9999999f + 1e-7f;
  float sum = 0;
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < 4; ++l) sum += acc[j][l];
  return sum;
}

struct ComputeLoop {
  const char* isa;
  float (*run)(uint64_t);
  int lanes;
};

ComputeLoop compute_loop() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) return {"avx512f", chains_avx512, 16};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2+fma", chains_avx2, 8};
#endif
  return {"baseline", chains_baseline, 4};
}

// Seconds `work(thread)` takes on `threads` threads started together (the slowest one).
double time_on_threads(int threads, const std::function<void(int)>& work) {
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& thread : pool) thread.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Best of 3 of GFLOP/s on `threads` threads, each running `steps` steps.
double gflops(const ComputeLoop& loop, int threads, uint64_t steps) {
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<float> sink(static_cast<size_t>(threads));
    const double seconds = time_on_threads(threads, [&](int t) { sink[static_cast<size_t>(t)] = loop.run(steps); });
    if (std::isnan(sink[0])) spdlog::debug("peak: NaN sum");  // uses the result
    best = std::max(best, static_cast<double>(steps) * kChains * loop.lanes * 2 * threads / seconds / 1e9);
  }
  return best;
}

// Steps of the compute loop that take about 50 ms on one thread.
uint64_t steps_for_50ms(const ComputeLoop& loop) {
  uint64_t steps = 1 << 14;
  for (;;) {
    const auto start = Clock::now();
    volatile float sink = loop.run(steps);
    (void)sink;
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds >= 0.05 || steps >= (uint64_t{1} << 40)) return steps;
    steps = seconds > 0.005 ? static_cast<uint64_t>(static_cast<double>(steps) * 0.05 / seconds) : steps * 8;
  }
}

// The size of CPU 0's unified (or data) cache of `level` in bytes, from sysfs (what lscpu reads; in
// a virtual machine sysconf may report the host's whole last-level cache); 0 when unknown.
size_t cache_size(int level) {
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), type_file(dir + "type"), size_file(dir + "size");
    int found = 0;
    std::string type, size;
    if (!(level_file >> found) || !(type_file >> type) || !(size_file >> size)) continue;
    if (found != level || type == "Instruction" || size.empty()) continue;
    const size_t scale = size.back() == 'K' ? 1024 : size.back() == 'M' ? 1024 * 1024 : 1;
    try {
      return static_cast<size_t>(std::stoull(size)) * scale;
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

// The working sets of the copy (both buffers, per thread for the per-core L2): half of L2, half of
// the last-level cache, and memory: four times the last-level cache, 64 MB to 512 MB.
struct Level {
  size_t bytes;
  bool per_thread;
};
std::vector<Level> copy_levels() {
  std::vector<Level> levels;
  const size_t l2 = cache_size(2), l3 = cache_size(3);
  levels.push_back({l2 > 0 ? l2 / 2 : size_t{256} << 10, true});
  if (l3 > 0) levels.push_back({l3 / 2, false});
  levels.push_back({std::clamp(4 * std::max(l3, l2), size_t{64} << 20, size_t{512} << 20), false});
  return levels;
}

// Best of 5 of GB/s (read + written) of memcpy over a working set of `bytes` (its first half the
// source, its second the destination), each thread its slice; repeated so that a round lasts at
// least about 10 ms.
double copy_gbytes(int threads, char* memory, size_t bytes) {
  const size_t half = bytes / 2, slice = half / static_cast<size_t>(threads) / 64 * 64;
  const int repeats = static_cast<int>(std::clamp<size_t>((size_t{64} << 20) / std::max<size_t>(bytes, 1), 1, 1000));
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    const double seconds = time_on_threads(threads, [&](int t) {
      const size_t offset = static_cast<size_t>(t) * slice;
      for (int r = 0; r < repeats; ++r) std::memcpy(memory + half + offset, memory + offset, slice);
    });
    best = std::max(best, 2.0 * static_cast<double>(slice) * threads * repeats / seconds / 1e9);
  }
  return best;
}

double number_in(const nlohmann::json& json, const char* key, double low, double high) {
  if (!json.contains(key) || !json[key].is_number())
    fail(ExitCode::invalid_input, "peak file: '{}' missing or not a number", key);
  const double value = json[key].get<double>();
  if (!(value >= low && value <= high)) fail(ExitCode::invalid_input, "peak file: '{}' {} out of range", key, value);
  return value;
}

std::string string_in(const nlohmann::json& json, const char* key) {
  if (!json.contains(key) || !json[key].is_string())
    fail(ExitCode::invalid_input, "peak file: '{}' missing or not a string", key);
  return json[key].get<std::string>();
}

}  // namespace

double PeakAt::gbytes_per_second(double bytes) const {
  for (const Bandwidth& level : levels)
    if (bytes <= level.bytes) return level.gbytes_per_second;
  return levels.empty() ? 0 : levels.back().gbytes_per_second;
}

PeakAt MachinePeak::for_threads(int threads) const {
  if (at.empty()) return {};
  for (const PeakAt& p : at)
    if (p.threads == threads) return p;
  const PeakAt& one = at.front();
  const PeakAt& most = at.back();
  const double scale = threads / static_cast<double>(one.threads);
  PeakAt p{.threads = threads, .gflops_per_second = std::min(one.gflops_per_second * scale, most.gflops_per_second)};
  for (size_t i = 0; i < one.levels.size(); ++i) {
    const Bandwidth& capped = i < most.levels.size() ? most.levels[i] : one.levels[i];
    p.levels.push_back(
        {.bytes = std::min(one.levels[i].bytes * scale, capped.bytes),
         .gbytes_per_second = std::min(one.levels[i].gbytes_per_second * scale, capped.gbytes_per_second)});
  }
  return p;
}

MachinePeak measure_machine_peak(const SystemInfo& system, int threads) {
  MachinePeak peak{.cpu_model = system.cpu_model, .cores = system.cores, .date = system.date};
  const ComputeLoop loop = compute_loop();
  peak.isa = loop.isa;
  const uint64_t steps = steps_for_50ms(loop);
  const std::vector<Level> levels = copy_levels();
  size_t most = 0;
  for (const Level& level : levels)
    most = std::max(most, level.bytes * (level.per_thread ? static_cast<size_t>(threads) : 1));
  check_memory_available(most, "mt-bench --calibrate-peak's memory copy");
  const auto free_block = [](char* p) { std::free(p); };
  std::unique_ptr<char, decltype(free_block)> memory(static_cast<char*>(std::aligned_alloc(64, most)), free_block);
  if (!memory) fail(ExitCode::failure, "out of memory allocating {} bytes", most);
  std::memset(memory.get(), 1, most);  // every page mapped before it is timed
  for (int t : {1, threads}) {
    if (!peak.at.empty() && t <= peak.at.back().threads) continue;
    PeakAt at{.threads = t, .gflops_per_second = gflops(loop, t, steps)};
    for (const Level& level : levels) {
      const size_t bytes = level.bytes * (level.per_thread ? static_cast<size_t>(t) : 1);
      at.levels.push_back(
          {.bytes = static_cast<double>(bytes), .gbytes_per_second = copy_gbytes(t, memory.get(), bytes)});
    }
    peak.at.push_back(std::move(at));
  }
  return peak;
}

std::string peak_file_path() {
  const std::string dir = cache_directory();
  return dir.empty() ? "" : (std::filesystem::path(dir) / "peak.json").string();
}

nlohmann::json peak_json(const MachinePeak& peak) {
  nlohmann::json at = nlohmann::json::array();
  for (const PeakAt& p : peak.at) {
    nlohmann::json levels = nlohmann::json::array();
    for (const Bandwidth& level : p.levels)
      levels.push_back({{"bytes", level.bytes}, {"gbytes_per_s", level.gbytes_per_second}});
    at.push_back({{"threads", p.threads}, {"gflops_per_s", p.gflops_per_second}, {"bandwidth", std::move(levels)}});
  }
  return {{"schema", kPeakSchema}, {"cpu_model", peak.cpu_model}, {"cores", peak.cores},
          {"isa", peak.isa},       {"date", peak.date},           {"at", std::move(at)}};
}

MachinePeak peak_from_json(const nlohmann::json& json) {
  if (!json.is_object()) fail(ExitCode::invalid_input, "peak file: not a JSON object");
  if (string_in(json, "schema") != kPeakSchema)
    fail(ExitCode::invalid_input, "peak file: schema '{}', expected '{}'", json["schema"].get<std::string>(),
         kPeakSchema);
  MachinePeak peak{.cpu_model = string_in(json, "cpu_model"),
                   .cores = static_cast<int>(number_in(json, "cores", 1, 1 << 20)),
                   .isa = string_in(json, "isa"),
                   .date = string_in(json, "date")};
  if (!json.contains("at") || !json["at"].is_array() || json["at"].empty() || json["at"].size() > 64)
    fail(ExitCode::invalid_input, "peak file: 'at' must list 1 to 64 measurements");
  for (const nlohmann::json& entry : json["at"]) {
    if (!entry.is_object()) fail(ExitCode::invalid_input, "peak file: an 'at' entry is not an object");
    PeakAt p{.threads = static_cast<int>(number_in(entry, "threads", 1, 1 << 20)),
             .gflops_per_second = number_in(entry, "gflops_per_s", 1e-6, 1e9)};
    if (!entry.contains("bandwidth") || !entry["bandwidth"].is_array() || entry["bandwidth"].empty() ||
        entry["bandwidth"].size() > 8)
      fail(ExitCode::invalid_input, "peak file: 'bandwidth' must list 1 to 8 levels");
    for (const nlohmann::json& level : entry["bandwidth"]) {
      if (!level.is_object()) fail(ExitCode::invalid_input, "peak file: a 'bandwidth' entry is not an object");
      const Bandwidth b{.bytes = number_in(level, "bytes", 1, 1e15),
                        .gbytes_per_second = number_in(level, "gbytes_per_s", 1e-6, 1e9)};
      if (!p.levels.empty() && b.bytes <= p.levels.back().bytes)
        fail(ExitCode::invalid_input, "peak file: 'bandwidth' levels must have ascending bytes");
      p.levels.push_back(b);
    }
    if (!peak.at.empty() && p.threads <= peak.at.back().threads)
      fail(ExitCode::invalid_input, "peak file: 'at' entries must have ascending thread counts");
    peak.at.push_back(p);
  }
  return peak;
}

void save_machine_peak(const MachinePeak& peak, const std::string& path) {
  std::error_code error;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, error);
  if (error) fail(ExitCode::failure, "cannot create {}: {}", dir.string(), error.message());
  OutputFile file(path, false);
  file.write(peak_json(peak).dump(2) + "\n");
  file.commit();
}

std::optional<MachinePeak> load_machine_peak(const std::string& path, const SystemInfo& system) {
  std::error_code error;
  if (path.empty() || !std::filesystem::exists(path, error)) return std::nullopt;
  try {
    const InputBytes file = read_input(path);
    if (file.size > (size_t{1} << 20)) fail(ExitCode::invalid_input, "peak file: {} bytes, more than 1 MiB", file.size);
    const auto* text = reinterpret_cast<const char*>(file.data);
    const nlohmann::json json = nlohmann::json::parse(text, text + file.size, nullptr, false);
    if (json.is_discarded()) fail(ExitCode::invalid_input, "peak file: not valid JSON");
    MachinePeak peak = peak_from_json(json);
    if (peak.cpu_model != system.cpu_model || peak.cores != system.cores) {
      spdlog::warn("{} was measured on another machine ({}, {} cores): run mt-bench --calibrate-peak again", path,
                   peak.cpu_model, peak.cores);
      return std::nullopt;
    }
    return peak;
  } catch (const Error& e) {
    spdlog::warn("{}: not used: {} (run mt-bench --calibrate-peak again)", path, e.what());
    return std::nullopt;
  }
}

}  // namespace mt::bench
