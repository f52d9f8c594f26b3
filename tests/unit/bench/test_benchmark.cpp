// run_benchmark on the reference backend with a small model file: every phase measured, the
// counts asked for, sane statistics and memory, the file's digest, profiles per node, and the
// reports and baseline gate built from the result.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "bench_test_util.h"
#include "kernels/reference/reference_backend.h"
#include "lib/bench/baseline.h"
#include "lib/bench/benchmark.h"
#include "lib/bench/report.h"
#include "lib/bench/sha256.h"
#include "lib/core/error.h"
#include "lib/format/model_file.h"

namespace mt::bench::test {
namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

struct Fixture {
  TempFile model{"mt_bench_test_model.mt"};
  std::unique_ptr<Backend> backend = make_reference_backend();
  Fixture() { save_model(conv_relu_graph(), model.path()); }
};

}  // namespace

TEST_CASE("run_benchmark measures each phase and the requested number of runs") {
  Fixture f;
  BenchOptions options{.model_path = f.model.path(), .warmup = 3, .iterations = 7};
  int progress_calls = 0;
  const BenchResult r = run_benchmark(*f.backend, options, [&](const Progress&) { ++progress_calls; });
  CHECK(progress_calls == 3 + 7);
  CHECK(r.backend == "reference");
  CHECK(r.warmup_runs == 3);
  CHECK(r.load_seconds > 0);
  CHECK(r.plan_seconds > 0);
  CHECK(r.first_run_seconds > 0);
  CHECK(r.latency.count == 7);
  CHECK(r.latency.samples.size() == 7);
  CHECK(r.latency.min > 0);
  CHECK(r.latency.min <= r.latency.median);
  CHECK(r.latency.median <= r.latency.max);
  // Intermediates: c and y, 1024 B each (the input x is the caller's memory); the arena shares
  // what liveness allows (here nothing: relu reads c while it writes y).
  CHECK(r.memory.intermediate_bytes == 2 * 1024);
  CHECK(r.memory.arena_bytes <= r.memory.intermediate_bytes);
  CHECK(r.memory.weight_bytes == (4 * 3 * 3 * 3 + 4) * 4);
  CHECK(r.peak.max_rss_bytes > 0);
  const std::string bytes = file_bytes(f.model.path());
  CHECK(r.model.file_bytes == bytes.size());
  CHECK(r.model.sha256 == sha256_hex(std::as_bytes(std::span(bytes.data(), bytes.size()))));
  CHECK(r.model.nodes == 2);
  REQUIRE(r.model.inputs.size() == 1);
  CHECK(r.model.inputs[0].name == "x");
  CHECK(r.model.inputs[0].source == "random (seed 0)");
  CHECK_FALSE(r.profile.has_value());
}

TEST_CASE("run_benchmark with a minimum time runs until the samples add up to it") {
  Fixture f;
  const BenchResult r = run_benchmark(*f.backend, {.model_path = f.model.path(), .warmup = 0, .min_time_seconds = 0.02});
  REQUIRE(r.latency.count >= 1);
  double sum = 0;
  for (double s : r.latency.samples) sum += s;
  CHECK(sum >= 0.02);
  // Stopping right after crossing the line: without the last sample the sum was short of it.
  CHECK(sum - r.latency.samples.back() < 0.02);
}

TEST_CASE("run_benchmark --profile gives one mean per node") {
  Fixture f;
  const BenchResult r = run_benchmark(*f.backend, {.model_path = f.model.path(), .plan = {.profile = true}, .warmup = 0, .iterations = 4});
  REQUIRE(r.profile.has_value());
  CHECK(r.profile->runs == 4);
  REQUIRE(r.profile->nodes.size() == 2);
  CHECK(r.profile->nodes[0].op == "conv2d");
  CHECK(r.profile->nodes[0].seconds > 0);
  CHECK(r.profile->total_seconds > 0);
  CHECK(r.profile->nodes[0].gflops_per_second.has_value());
}

TEST_CASE("run_benchmark refuses a model prepacked for another backend") {
  TempFile model{"mt_bench_test_prepacked.mt"};
  Graph graph = conv_relu_graph();
  graph.metadata["backend"] = "cpu";
  save_model(graph, model.path());
  const auto backend = make_reference_backend();
  try {
    run_benchmark(*backend, {.model_path = model.path()});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
  }
}

TEST_CASE("reports: JSON fields, CSV blocks, text sections") {
  Fixture f;
  const BenchResult r = run_benchmark(*f.backend, {.model_path = f.model.path(), .plan = {.profile = true}, .warmup = 1, .iterations = 3});
  const nlohmann::json j = report_json(r, std::nullopt);
  CHECK(j["schema"] == kReportSchema);
  CHECK(j["tool"]["name"] == "mt-bench");
  CHECK(j["setup"]["device"] == "reference");
  CHECK(j["setup"]["iterations"] == 3);
  CHECK(j["setup"]["min_time_s"].is_null());
  CHECK(j["timing"]["latency_ms"]["count"] == 3);
  CHECK(j["timing"]["latency_ms"]["samples"].size() == 3);
  CHECK(j["timing"]["latency_ms"]["median"].get<double>() == doctest::Approx(r.latency.median * 1e3));
  CHECK(j["profile"]["nodes"].size() == 2);
  CHECK(j["profile"]["nodes"][1]["flops"].is_null());
  CHECK_FALSE(j.contains("baseline"));

  const std::string csv = report_csv(r, std::nullopt);
  // Summary (header + row), empty line, nodes (header + 2), empty line, ops (header + 2).
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 2 + 1 + 3 + 1 + 3);
  CHECK(csv.starts_with("model,sha256,device,threads,"));

  const std::string text = report_text(r, std::nullopt);
  for (const char* part : {"first inference", "median", "arena", "per op type", "per node", "conv2d"})
    CHECK_MESSAGE(text.find(part) != std::string::npos, part);
}

TEST_CASE("baseline gate: ratio of medians against the allowed regression") {
  Fixture f;
  BenchResult r = run_benchmark(*f.backend, {.model_path = f.model.path(), .warmup = 0, .iterations = 1});
  r.latency.median = 0.012;
  nlohmann::json old = report_json(r, std::nullopt);
  old["timing"]["latency_ms"]["median"] = 10.0;

  BaselineCheck check = check_baseline(old, "old.json", r, 10);
  CHECK(check.ratio == doctest::Approx(1.2));
  CHECK(check.regressed);
  CHECK(check.setup_differences.empty());
  CHECK(baseline_summary(check) == "median 12.000 ms vs baseline 10.000 ms (old.json): ratio 1.200, allowed 1.100: REGRESSION");
  CHECK_FALSE(check_baseline(old, "old.json", r, 25).regressed);
  r.latency.median = 0.009;
  CHECK_FALSE(check_baseline(old, "old.json", r, 0).regressed);

  old["setup"]["threads"] = 2;
  CHECK(check_baseline(old, "old.json", r, 10).setup_differences == std::vector<std::string>{"threads 1 vs 2"});
  CHECK(report_json(r, check)["baseline"]["regressed"] == true);
}

TEST_CASE("read_baseline rejects files that are not mt-bench reports") {
  TempFile file{"mt_bench_test_baseline.json"};
  for (const char* content : {"not json", "{}", R"({"timing": {"latency_ms": {"median": 0}}})"}) {
    std::ofstream(file.path()) << content;
    try {
      read_baseline(file.path());
      FAIL("expected an error for " << content);
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::invalid_input);
      CHECK(std::string(e.what()).find(file.path()) != std::string::npos);
    }
  }
  std::ofstream(file.path()) << R"({"timing": {"latency_ms": {"median": 2.5}}})";
  CHECK(read_baseline(file.path())["timing"]["latency_ms"]["median"] == 2.5);
}

}  // namespace mt::bench::test
