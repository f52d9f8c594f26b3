#include <fmt/format.h>

#include "lib/bench/report.h"

namespace mt::bench {
namespace {

// RFC 4180: quote a field holding a comma, quote or line break, doubling inner quotes.
std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv_row(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ',';
    line += csv_field(cells[i]);
  }
  return line + "\n";
}

std::string number(double value) { return fmt::format("{:.6g}", value); }
std::string ms(double seconds) { return fmt::format("{:.6f}", seconds * 1e3); }
std::string optional_number(const std::optional<double>& value) { return value ? number(*value) : ""; }

}  // namespace

std::string report_csv(const BenchResult& r, const std::optional<BaselineCheck>& baseline) {
  const LatencyStats& s = r.latency;
  std::vector<std::string> header = {"model", "sha256", "device", "threads", "cpu_model", "date", "load_ms", "plan_ms",
                                     "first_inference_ms", "runs", "min_ms", "median_ms", "mean_ms", "p90_ms", "p99_ms",
                                     "max_ms", "stddev_ms", "peak_rss_bytes", "arena_bytes", "intermediate_bytes",
                                     "weight_bytes", "packed_weight_bytes"};
  std::vector<std::string> row = {r.model.path, r.model.sha256, r.backend, std::to_string(r.options.plan.threads),
                                  r.system.cpu_model, r.system.date, ms(r.load_seconds), ms(r.plan_seconds),
                                  ms(r.first_run_seconds), std::to_string(s.count), ms(s.min), ms(s.median), ms(s.mean),
                                  ms(s.p90), ms(s.p99), ms(s.max), ms(s.stddev), std::to_string(r.peak.max_rss_bytes),
                                  std::to_string(r.memory.arena_bytes), std::to_string(r.memory.intermediate_bytes),
                                  std::to_string(r.memory.weight_bytes), std::to_string(r.memory.packed_weight_bytes)};
  if (baseline) {
    header.insert(header.end(), {"baseline_median_ms", "ratio", "regressed"});
    row.insert(row.end(), {ms(baseline->baseline_median_seconds), number(baseline->ratio), baseline->regressed ? "true" : "false"});
  }
  std::string text = csv_row(header) + csv_row(row);
  if (!r.profile) return text;

  text += "\n";
  text += csv_row({"index", "node", "op", "output_shape", "time_ms", "percent", "flops", "gflops_per_s", "bytes",
                   "gbytes_per_s", "percent_of_peak"});
  for (const NodeProfile& n : r.profile->nodes)
    text += csv_row({std::to_string(n.index), n.name, n.op, shape_str(n.output_shape), ms(n.seconds), number(n.percent),
                     optional_number(n.flops), optional_number(n.gflops_per_second), fmt::format("{:.0f}", n.bytes),
                     optional_number(n.gbytes_per_second), optional_number(n.percent_of_peak)});
  text += "\n";
  text += csv_row(
      {"op", "nodes", "time_ms", "percent", "flops", "gflops_per_s", "bytes", "gbytes_per_s", "percent_of_peak"});
  for (const OpProfile& o : r.profile->ops)
    text += csv_row({o.op, std::to_string(o.nodes), ms(o.seconds), number(o.percent), optional_number(o.flops),
                     optional_number(o.gflops_per_second), fmt::format("{:.0f}", o.bytes),
                     optional_number(o.gbytes_per_second), optional_number(o.percent_of_peak)});
  return text;
}

}  // namespace mt::bench
