#include "lib/bench/report.h"

#include "lib/core/version.h"
#include "mt/version.h"

namespace mt::bench {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& value) { return value ? json(*value) : json(nullptr); }

json latency_json(const LatencyStats& s) {
  json samples = json::array();
  for (double seconds : s.samples) samples.push_back(seconds * 1e3);
  return {{"count", s.count}, {"min", s.min * 1e3},   {"median", s.median * 1e3}, {"mean", s.mean * 1e3},
          {"p90", s.p90 * 1e3}, {"p99", s.p99 * 1e3}, {"max", s.max * 1e3},       {"stddev", s.stddev * 1e3},
          {"samples", std::move(samples)}};
}

const char* bound_of(bool memory_bound) { return memory_bound ? "memory" : "compute"; }

json profile_json(const Profile& profile) {
  json nodes = json::array(), ops = json::array();
  for (const NodeProfile& n : profile.nodes)
    nodes.push_back({{"index", n.index}, {"name", n.name}, {"op", n.op}, {"output_shape", n.output_shape},
                     {"time_ms", n.seconds * 1e3}, {"percent", n.percent}, {"flops", optional_number(n.flops)},
                     {"gflops_per_s", optional_number(n.gflops_per_second)}, {"bytes", n.bytes},
                     {"gbytes_per_s", optional_number(n.gbytes_per_second)}, {"bound", bound_of(n.memory_bound)},
                     {"percent_of_peak", optional_number(n.percent_of_peak)}});
  for (const OpProfile& o : profile.ops)
    ops.push_back({{"op", o.op}, {"nodes", o.nodes}, {"time_ms", o.seconds * 1e3}, {"percent", o.percent},
                   {"flops", optional_number(o.flops)}, {"gflops_per_s", optional_number(o.gflops_per_second)},
                   {"bytes", o.bytes}, {"gbytes_per_s", optional_number(o.gbytes_per_second)}, {"bound", bound_of(o.memory_bound)},
                   {"percent_of_peak", optional_number(o.percent_of_peak)}});
  json peak = nullptr;
  if (profile.peak)
    peak = {{"threads", profile.peak->threads}, {"gflops_per_s", profile.peak->gflops_per_second},
            {"bandwidth", peak_json(MachinePeak{.at = {*profile.peak}})["at"][0]["bandwidth"]},
            {"source", profile.peak_source}};
  return {{"runs", profile.runs}, {"total_ms", profile.total_seconds * 1e3}, {"peak", std::move(peak)},
          {"nodes", std::move(nodes)}, {"ops", std::move(ops)}};
}

}  // namespace

json report_json(const BenchResult& r, const std::optional<BaselineCheck>& baseline) {
  const BenchOptions& o = r.options;
  json inputs = json::array();
  for (const InputSource& in : r.model.inputs)
    inputs.push_back({{"name", in.name}, {"dtype", in.dtype}, {"shape", in.shape}, {"source", in.source}});
  json report = {
      {"schema", kReportSchema},
      {"tool", {{"name", "mt-bench"}, {"version", version_string()}, {"git_describe", MT_GIT_DESCRIBE},
                {"build", version_details()}}},
      {"model", {{"path", r.model.path}, {"sha256", r.model.sha256}, {"file_bytes", r.model.file_bytes},
                 {"nodes", r.model.nodes}, {"tensors", r.model.tensors}, {"inputs", std::move(inputs)}}},
      {"setup", {{"device", r.backend}, {"threads", o.plan.threads}, {"warmup", r.warmup_runs},
                 {"iterations", o.min_time_seconds > 0 ? json(nullptr) : json(o.iterations)},
                 {"min_time_s", o.min_time_seconds > 0 ? json(o.min_time_seconds) : json(nullptr)},
                 {"cooldown_s", o.cooldown_seconds}, {"profile", o.plan.profile}}},
      {"system", {{"cpu_model", r.system.cpu_model}, {"cores", r.system.cores}, {"os", r.system.os},
                  {"kernel", r.system.kernel}, {"date", r.system.date}}},
      {"timing", {{"load_ms", r.load_seconds * 1e3}, {"plan_ms", r.plan_seconds * 1e3},
                  {"load_cpu_ms", r.load_cpu_seconds * 1e3}, {"plan_cpu_ms", r.plan_cpu_seconds * 1e3},
                  {"first_inference_ms", r.first_run_seconds * 1e3}, {"latency_ms", latency_json(r.latency)}}},
      {"memory", {{"peak_rss_bytes", r.peak.max_rss_bytes},
                  {"vm_hwm_bytes", r.peak.vm_hwm_bytes ? json(*r.peak.vm_hwm_bytes) : json(nullptr)},
                  {"arena_bytes", r.memory.arena_bytes}, {"intermediate_bytes", r.memory.intermediate_bytes},
                  {"weight_bytes", r.memory.weight_bytes}, {"packed_weight_bytes", r.memory.packed_weight_bytes}}},
  };
  if (r.backend == "vulkan") {
    report["setup"]["gpu"] = o.plan.gpu_index;
    report["setup"]["gpu_name"] = r.gpu_name;
    report["setup"]["precision"] = o.plan.precision;
  }
  if (r.profile) report["profile"] = profile_json(*r.profile);
  if (baseline)
    report["baseline"] = {{"path", baseline->path}, {"median_ms", baseline->baseline_median_seconds * 1e3},
                          {"current_median_ms", baseline->current_median_seconds * 1e3}, {"ratio", baseline->ratio},
                          {"max_regression_percent", baseline->max_regression_percent},
                          {"regressed", baseline->regressed}, {"setup_differences", baseline->setup_differences}};
  return report;
}

}  // namespace mt::bench
