#include "lib/bench/benchmark.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <thread>

#include "lib/bench/sha256.h"
#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/format/model_file.h"
#include "lib/runtime/run_once.h"

namespace mt::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// CPU seconds of the whole process (every thread): what loading and planning cost, which other work
// on a shared machine hardly moves, unlike wall-clock time.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void cool_down(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::vector<InputSource> describe_inputs(const Graph& graph, const InputOptions& options) {
  std::vector<InputSource> sources;
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const TensorInfo& info = graph.tensor(graph.inputs[i]);
    // load_inputs seeds input i with seed + i.
    sources.push_back({.name = info.name, .dtype = std::string(dtype_name(info.dtype)), .shape = info.shape,
                       .source = fmt::format("random (seed {})", options.seed + i)});
  }
  for (const std::string& spec : options.specs) {
    const InputSpec parsed = parse_input_spec(graph, spec);
    sources[parsed.index].source = parsed.path;
  }
  return sources;
}

}  // namespace

BenchResult run_benchmark(const Backend& backend, const BenchOptions& options, const ProgressFn& progress) {
  if (options.iterations < 1 && options.min_time_seconds <= 0)
    fail(ExitCode::usage, "nothing to measure: iterations {} and no minimum time", options.iterations);

  BenchResult result;
  result.options = options;
  result.backend = std::string(backend.name());
  result.system = collect_system_info();
  const bool from_stdin = options.model_path.empty() || options.model_path == "-";
  result.model.path = from_stdin ? "<stdin>" : options.model_path;

  // Load: what a deployed program pays before it can plan (map the file, decode, validate). The data
  // section's checksum runs on a thread of its own meanwhile, until planning is done (mt-format(5)).
  // Load and plan are timed back to back, as a program would do them: the file's SHA-256 and the
  // inputs come after.
  const auto load_start = Clock::now();
  const double load_cpu_start = process_cpu_seconds();
  const InputBytes bytes = read_input(options.model_path);
  DataCheck data_check;
  const Graph graph = decode_model(bytes, data_check);
  result.load_seconds = seconds_since(load_start);
  result.load_cpu_seconds = process_cpu_seconds() - load_cpu_start;
  spdlog::info("loaded {} in {:.2f} ms: {} nodes", result.model.path, result.load_seconds * 1e3, graph.nodes.size());

  PlanOptions plan_options = options.plan;
  if (plan_options.precision.empty()) plan_options.precision = default_precision(graph);
  result.options.plan.precision = plan_options.precision;  // what the report shows: the precision planned in
  const auto plan_start = Clock::now();
  const double plan_cpu_start = process_cpu_seconds();
  const std::unique_ptr<ExecutionPlan> plan = data_check.guard([&] {
    require_model_backend(graph, result.backend, result.model.path);
    return backend.plan(graph, plan_options);
  });
  data_check.wait();
  result.plan_seconds = seconds_since(plan_start);
  result.plan_cpu_seconds = process_cpu_seconds() - plan_cpu_start;

  result.model.sha256 = sha256_hex(bytes.bytes());
  result.model.file_bytes = bytes.size;
  result.model.nodes = graph.nodes.size();
  result.model.tensors = graph.tensors.size();
  InputOptions input_options = options.inputs;
  input_options.random = true;
  const std::vector<HostArray> inputs = load_inputs(graph, input_options);
  result.model.inputs = describe_inputs(graph, input_options);

  for (size_t i = 0; i < inputs.size(); ++i) plan->bind_input(i, inputs[i].data.data());
  plan->reuse_unchanged_inputs(true);  // the same inputs every run: vulkan copies them once (mt-bench(1))
  result.memory = plan->memory();
  spdlog::info("planned on {} in {:.2f} ms", result.backend, result.plan_seconds * 1e3);

  // The first run pays for lazy work (page faults on weights and arena, caches, thread start-up).
  const auto first_start = Clock::now();
  plan->run();
  result.first_run_seconds = seconds_since(first_start);

  const auto warmup_start = Clock::now();
  for (int i = 0; i < options.warmup; ++i) {
    if (progress) progress({.phase = "warm-up", .done = i, .total = options.warmup, .elapsed_seconds = seconds_since(warmup_start)});
    cool_down(options.cooldown_seconds);
    plan->run();
    result.warmup_runs += 1;
  }

  const bool timed = options.min_time_seconds > 0;
  const int total = timed ? 0 : options.iterations;
  std::vector<double> samples;
  std::vector<std::vector<NodeTiming>> node_timings;
  double measured = 0;
  const auto measure_start = Clock::now();
  for (int i = 0; timed ? (i == 0 || measured < options.min_time_seconds) && i < kMaxIterations : i < options.iterations; ++i) {
    if (progress) progress({.phase = "measure", .done = i, .total = total, .elapsed_seconds = seconds_since(measure_start)});
    cool_down(options.cooldown_seconds);
    const auto start = Clock::now();
    plan->run();
    const double seconds = seconds_since(start);
    samples.push_back(seconds);
    measured += seconds;
    if (options.plan.profile) node_timings.push_back(plan->last_profile());
  }
  result.latency = summarize_latency(std::move(samples));
  if (options.plan.profile) {
    const bool any = std::any_of(node_timings.begin(), node_timings.end(), [](const auto& run) { return !run.empty(); });
    if (!any) unsupported("--profile: backend '{}' returned no per-node timings", result.backend);
    result.profile = aggregate_profile(graph, node_timings);
  }
  result.peak = peak_memory();
  return result;
}

}  // namespace mt::bench
