// The measurement itself: load a model (timed: read + validate), plan it on a backend (timed),
// run it once (first inference), warm up, then time steady-state runs, optionally profiling
// every node; plus the setup a report needs to say what was measured where.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/bench/latency_stats.h"
#include "lib/bench/peak_memory.h"
#include "lib/bench/profile.h"
#include "lib/bench/system_info.h"
#include "lib/runtime/backend.h"
#include "lib/runtime/inputs.h"

namespace mt::bench {

// Upper bound on measured runs with min_time_seconds, so the sample list stays bounded.
inline constexpr int kMaxIterations = 1'000'000;

struct BenchOptions {
  std::string model_path;  // "-" or "": standard input
  // How the model is planned (threads, GPU, kernel paths; profile: aggregate per-node timings).
  // An empty precision is the model's, default_precision(model); the result holds the one planned in.
  PlanOptions plan = {.precision = ""};
  int warmup = 2;                // runs after the first inference that are not measured
  int iterations = 20;           // measured runs, when min_time_seconds is 0
  double min_time_seconds = 0;   // > 0: measure until the runs add up to this (at least one run)
  double cooldown_seconds = 0;   // sleep before every run after the first inference
  InputOptions inputs;           // specs; inputs not given are seeded random (inputs.seed)
};

struct InputSource {
  std::string name;
  std::string dtype;
  Shape shape;
  std::string source;  // the file, or "random (seed N)"
};

struct ModelSummary {
  std::string path;    // as given; "<stdin>" for standard input
  std::string sha256;  // of the file's bytes
  size_t file_bytes = 0;
  size_t nodes = 0;
  size_t tensors = 0;
  std::vector<InputSource> inputs;
};

struct BenchResult {
  BenchOptions options;
  std::string backend;  // Backend::name(): "reference", "cpu", "vulkan"
  std::string gpu_name;  // vulkan: the device's name and driver, set by the caller (Backend::describe)
  ModelSummary model;
  SystemInfo system;
  double load_seconds = 0;   // read (mmap or stdin) + decode + validate
  double plan_seconds = 0;   // Backend::plan
  double load_cpu_seconds = 0, plan_cpu_seconds = 0;  // the same in CPU time of the process (all threads)
  double first_run_seconds = 0;
  int warmup_runs = 0;
  LatencyStats latency;      // steady-state runs, seconds
  MemoryStats memory;        // ExecutionPlan::memory()
  PeakMemory peak;           // at the end of the benchmark
  std::optional<Profile> profile;
};

// Called before each run; total is 0 when the number of runs is open-ended (min_time_seconds).
struct Progress {
  std::string_view phase;  // "warm-up" or "measure"
  int done = 0;
  int total = 0;
  double elapsed_seconds = 0;  // of the phase so far
};
using ProgressFn = std::function<void(const Progress&)>;

// Runs the whole benchmark on `backend`. Errors: unreadable or invalid model or inputs
// (invalid_input), a model prepacked for another backend or with nodes the backend cannot run
// (unsupported).
BenchResult run_benchmark(const Backend& backend, const BenchOptions& options, const ProgressFn& progress = {});

}  // namespace mt::bench
