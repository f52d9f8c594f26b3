// mt-bench: measures a model on a backend (load, plan, first inference, steady-state latency,
// memory, optionally every node, each beside the machine's peak) and reports it as a table, JSON
// or CSV; with --baseline it is the gate a CI benchmark job uses (exit 5 on a regression). With
// --calibrate-peak it measures that peak instead (lib/bench/machine_peak.h) and stores it.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "lib/bench/baseline.h"
#include "lib/bench/benchmark.h"
#include "lib/bench/machine_peak.h"
#include "lib/bench/report.h"
#include "lib/cli/device_flags.h"
#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/runtime/backend_registry.h"

namespace {

struct Options {
  mt::bench::BenchOptions bench;
  mt::cli::DeviceFlags run_on;
  std::string format = "text";
  std::string baseline;
  double max_regression = 10;
  bool profile = false;
  bool calibrate_peak = false;
};

// "\r[measure 12/20]" on a terminal, overwritten in place and cleared at the end.
class ProgressLine {
 public:
  void operator()(const mt::bench::Progress& p) {
    const std::string total = p.total > 0 ? fmt::format("/{}", p.total) : "";
    std::fprintf(stderr, "\r\033[K%.*s %d%s (%.1f s)", static_cast<int>(p.phase.size()), p.phase.data(), p.done + 1,
                 total.c_str(), p.elapsed_seconds);
    std::fflush(stderr);
    shown_ = true;
  }
  ~ProgressLine() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  bool shown_ = false;
};

// --calibrate-peak: measure the machine's peak on 1 thread and on `threads` (all cores unless
// --threads was given), store it in peak_file_path() and report it.
int calibrate(const Options& o, bool threads_given) {
  const mt::bench::SystemInfo system = mt::bench::collect_system_info();
  const int threads = threads_given ? o.run_on.threads : std::max(1, system.cores);
  const mt::bench::MachinePeak peak = mt::bench::measure_machine_peak(system, threads);
  const std::string path = mt::bench::peak_file_path();
  if (path.empty()) spdlog::warn("no cache directory (MT_CACHE_DIR is empty, or no HOME): the peak is not stored");
  else mt::bench::save_machine_peak(peak, path);
  std::string text;
  if (o.format == "json") {
    nlohmann::json report = mt::bench::peak_json(peak);
    report["path"] = path.empty() ? nlohmann::json(nullptr) : nlohmann::json(path);
    text = report.dump(2) + "\n";
  } else if (o.format == "csv") {
    text = "threads,gflops_per_s,working_set_bytes,gbytes_per_s\n";
    for (const mt::bench::PeakAt& at : peak.at)
      for (const mt::bench::Bandwidth& level : at.levels)
        text += fmt::format("{},{:.6g},{:.0f},{:.6g}\n", at.threads, at.gflops_per_second, level.bytes,
                            level.gbytes_per_second);
  } else {
    text =
        fmt::format("machine peak of {}, {} cores ({} vectors), {}\n", peak.cpu_model, peak.cores, peak.isa, peak.date);
    for (const mt::bench::PeakAt& at : peak.at)
      text += fmt::format("  {:>3} thread{}  {:8.1f} GFLOP/s; copies {}\n", at.threads, at.threads == 1 ? " " : "s",
                          at.gflops_per_second, mt::bench::bandwidth_text(at));
    text += path.empty() ? "not stored\n" : fmt::format("stored in {} (mt-bench --profile compares with it)\n", path);
  }
  mt::OutputFile out("-", false);
  out.write(text);
  out.commit();
  return 0;
}

int run(Options& o, bool show_progress) {
  const mt::Backend& backend = mt::require_backend(o.run_on.device);
  o.run_on.check();
  o.bench.plan = o.run_on.plan_options(mt::PlanOptions::from_environment());
  o.bench.plan.profile = o.profile;
  // Read the baseline first: a bad path should not cost a whole benchmark.
  const std::optional<nlohmann::json> baseline =
      o.baseline.empty() ? std::nullopt : std::optional(mt::bench::read_baseline(o.baseline));

  mt::bench::BenchResult result;
  {
    ProgressLine line;
    mt::bench::ProgressFn progress;
    if (show_progress) progress = [&line](const mt::bench::Progress& p) { line(p); };
    result = mt::bench::run_benchmark(backend, o.bench, progress);
  }
  result.gpu_name = backend.describe(o.run_on.gpu);
  // The CPU's peak for backends that run on it (not a GPU's): each node's rate beside it.
  if (result.profile && result.backend != "vulkan") {
    const std::string path = mt::bench::peak_file_path();
    if (auto peak = mt::bench::load_machine_peak(path, result.system))
      mt::bench::with_peak(*result.profile, peak->for_threads(o.bench.plan.threads),
                           fmt::format("{}, measured {}", path, peak->date));
  }

  std::optional<mt::bench::BaselineCheck> check;
  if (baseline) {
    check = mt::bench::check_baseline(*baseline, o.baseline, result, o.max_regression);
    for (const std::string& difference : check->setup_differences)
      spdlog::warn("baseline {} was measured differently: {}", o.baseline, difference);
  }

  std::string text;
  if (o.format == "json") text = mt::bench::report_json(result, check).dump(2) + "\n";
  else if (o.format == "csv") text = mt::bench::report_csv(result, check);
  else text = mt::bench::report_text(result, check);
  mt::OutputFile out("-", false);
  out.write(text);
  out.commit();

  if (check) {
    if (check->regressed) {
      spdlog::error("{}", mt::bench::baseline_summary(*check));
      return static_cast<int>(mt::ExitCode::check_failed);
    }
    spdlog::info("{}", mt::bench::baseline_summary(*check));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  mt::cli::Tool tool("mt-bench", "Benchmark a model on a backend: load and plan time, latency, memory, per-node profile.");
  Options o;
  auto& app = tool.app();
  app.add_option("model", o.bench.model_path, "Model file (.mt); default or '-': stdin")->option_text("MODEL");
  o.run_on.add_to(app, "mt-run --list-devices");
  app.add_option("-w,--warmup", o.bench.warmup, "Unmeasured runs after the first inference")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  auto* iterations = app.add_option("-n,--iterations", o.bench.iterations, "Measured runs")
                         ->check(CLI::Range(1, mt::bench::kMaxIterations))
                         ->capture_default_str();
  app.add_option("--min-time", o.bench.min_time_seconds, "Measure until the runs add up to S seconds (instead of -n)")
      ->option_text("S")
      ->check(CLI::Range(1e-6, 86400.0))
      ->excludes(iterations);
  app.add_option("--cooldown", o.bench.cooldown_seconds, "Sleep S seconds before every run after the first (thermally limited devices)")
      ->option_text("S")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_flag("-p,--profile", o.profile, "Time every node (vulkan: GPU timestamp queries); adds per-node and per-op-type tables");
  app.add_option("-f,--format", o.format, "Report format")->check(CLI::IsMember({"text", "json", "csv"}))->capture_default_str();
  app.add_option("-i,--input", o.bench.inputs.specs,
                 "Input from a .npy file or an image (repeat per input); inputs not given are seeded random")
      ->option_text("NAME=FILE")
      ->allow_extra_args(false);
  app.add_option("--seed", o.bench.inputs.seed, "Seed of the random inputs")->capture_default_str();
  auto* baseline = app.add_option("--baseline", o.baseline, "Compare the median with a report of mt-bench --format json")
                       ->option_text("OLD.json");
  app.add_option("--max-regression", o.max_regression, "Exit 5 when the median is more than PCT percent slower than --baseline")
      ->option_text("PCT")
      ->check(CLI::Range(0.0, 1e6))
      ->needs(baseline)
      ->capture_default_str();
  auto* calibrate_flag =
      app.add_flag("--calibrate-peak", o.calibrate_peak,
                   "Measure this machine's peak GFLOP/s and memory GB/s (1 thread and all cores, or --threads) and "
                   "store it for --profile; no model");
  for (const char* other : {"model", "--device", "--gpu", "--precision", "--warmup", "--iterations", "--min-time",
                            "--cooldown", "--profile", "--input", "--seed", "--baseline", "--max-regression"})
    calibrate_flag->excludes(app.get_option(other));
  // Progress only for a person watching: stderr is a terminal and -q was not given.
  return tool.run(argc, argv, [&] {
    if (o.calibrate_peak) return calibrate(o, app.count("--threads") > 0);
    return run(o, mt::stderr_is_terminal() && spdlog::get_level() <= spdlog::level::warn);
  });
}
