// mt-bench: measures a model on a backend (load, plan, first inference, steady-state latency,
// memory, optionally every node) and reports it as a table, JSON or CSV; with --baseline it is
// the gate a CI benchmark job uses (exit 5 on a regression).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "lib/bench/baseline.h"
#include "lib/bench/benchmark.h"
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
  // Progress only for a person watching: stderr is a terminal and -q was not given.
  return tool.run(argc, argv, [&] { return run(o, mt::stderr_is_terminal() && spdlog::get_level() <= spdlog::level::warn); });
}
