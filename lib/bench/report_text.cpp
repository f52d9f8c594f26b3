#include <fmt/format.h>

#include "lib/bench/report.h"
#include "lib/bench/text_table.h"
#include "lib/core/version.h"

namespace mt::bench {
namespace {

using Align = TextTable::Align;

std::string ms(double seconds) { return fmt::format("{:.3f}", seconds * 1e3); }

std::string rate_cell(const std::optional<double>& rate) { return rate ? fmt::format("{:.2f}", *rate) : "-"; }

std::string percent_cell(const std::optional<double>& percent) {
  return percent ? fmt::format("{:.0f}", *percent) : "-";
}

// GB/s only where the node is memory-bound: a compute-bound conv's bytes say little.
template <typename Entry>
std::optional<double> memory_rate(const Entry& e) {
  return e.memory_bound ? e.gbytes_per_second : std::nullopt;
}

}  // namespace

std::string bandwidth_text(const PeakAt& peak) {
  std::string text;
  for (const Bandwidth& level : peak.levels)
    text +=
        fmt::format("{}{:.1f} GB/s in {}", text.empty() ? "" : ", ", level.gbytes_per_second, human_bytes(level.bytes));
  return text;
}

namespace {

std::string profile_text(const Profile& p) {
  std::string text;
  if (p.peak) {
    text += fmt::format("\npeak             {:.1f} GFLOP/s at {} thread{}; copies {} ({})\n", p.peak->gflops_per_second,
                        p.peak->threads, p.peak->threads == 1 ? "" : "s", bandwidth_text(*p.peak), p.peak_source);
    text +=
        "                 % peak: of min(GFLOP/s, FLOP per byte x GB/s) (a roofline), or of GB/s, with the GB/s of "
        "the smallest working set holding the node's bytes\n";
  } else {
    text += "\npeak             not measured on this machine (mt-bench --calibrate-peak)\n";
  }
  text += fmt::format("\nper op type (mean of {} run{}, {} ms in nodes)\n", p.runs, p.runs == 1 ? "" : "s",
                      ms(p.total_seconds));
  TextTable ops({{"op", Align::left}, {"nodes"}, {"time ms"}, {"%"}, {"GFLOP/s"}, {"GB/s"}, {"% peak"}});
  for (const OpProfile& o : p.ops)
    ops.add_row({o.op, std::to_string(o.nodes), ms(o.seconds), fmt::format("{:.1f}", o.percent),
                 rate_cell(o.gflops_per_second), rate_cell(memory_rate(o)), percent_cell(o.percent_of_peak)});
  text += ops.render("  ");
  text += "\nper node\n";
  TextTable nodes({{"#"},
                   {"node", Align::left},
                   {"op", Align::left},
                   {"output shape", Align::left},
                   {"time ms"},
                   {"%"},
                   {"GFLOP/s"},
                   {"GB/s"},
                   {"% peak"}});
  for (const NodeProfile& n : p.nodes)
    nodes.add_row({std::to_string(n.index), n.name, n.op, shape_str(n.output_shape), ms(n.seconds),
                   fmt::format("{:.1f}", n.percent), rate_cell(n.gflops_per_second), rate_cell(memory_rate(n)),
                   percent_cell(n.percent_of_peak)});
  text += nodes.render("  ");
  return text;
}

}  // namespace

std::string human_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.{}f} {}", bytes, bytes < 10 ? 2 : bytes < 100 ? 1 : 0, kUnits[unit]);
}

std::string report_text(const BenchResult& r, const std::optional<BaselineCheck>& baseline) {
  const BenchOptions& o = r.options;
  std::string text;
  const auto field = [&](std::string_view name, const std::string& value) { text += fmt::format("{:<17}{}\n", name, value); };
  field("model", fmt::format("{}: {}, {} nodes, sha256 {}", r.model.path, human_bytes(static_cast<double>(r.model.file_bytes)),
                             r.model.nodes, r.model.sha256.substr(0, 16)));
  for (const InputSource& in : r.model.inputs)
    field("input", fmt::format("{} {} {}: {}", in.name, in.dtype, shape_str(in.shape), in.source));
  if (r.backend == "vulkan")
    field("device", fmt::format("vulkan, GPU {}: {}, {}{}", o.plan.gpu_index, r.gpu_name, o.plan.precision,
                                o.plan.profile ? ", profiling every node (GPU timestamps)" : ""));
  else
    field("device", fmt::format("{}, {} thread{}{}", r.backend, o.plan.threads, o.plan.threads == 1 ? "" : "s",
                                o.plan.profile ? ", profiling every node" : ""));
  field("machine", fmt::format("{}, {} cores; {}; {}", r.system.cpu_model, r.system.cores, r.system.os, r.system.kernel));
  field("date", r.system.date);
  field("tool", version_details());
  text += "\n";
  field("load", fmt::format("{} ms ({} ms CPU)", ms(r.load_seconds), ms(r.load_cpu_seconds)));
  field("plan", fmt::format("{} ms ({} ms CPU)", ms(r.plan_seconds), ms(r.plan_cpu_seconds)));
  field("first inference", ms(r.first_run_seconds) + " ms");
  const LatencyStats& s = r.latency;
  field("latency", fmt::format("{} run{} after {} warm-up{}{}, ms", s.count, s.count == 1 ? "" : "s", r.warmup_runs,
                               r.warmup_runs == 1 ? "" : "s",
                               o.cooldown_seconds > 0 ? fmt::format(", {} s cool-down before each", o.cooldown_seconds) : ""));
  TextTable latency({{"min"}, {"median"}, {"mean"}, {"p90"}, {"p99"}, {"max"}, {"stddev"}});
  latency.add_row({ms(s.min), ms(s.median), ms(s.mean), ms(s.p90), ms(s.p99), ms(s.max), ms(s.stddev)});
  text += latency.render(std::string(17, ' '));
  text += "\n";
  const MemoryStats& m = r.memory;
  field("peak RSS", human_bytes(static_cast<double>(r.peak.max_rss_bytes)) +
                        (r.peak.vm_hwm_bytes ? fmt::format(" (VmHWM {})", human_bytes(static_cast<double>(*r.peak.vm_hwm_bytes))) : ""));
  const double shared = m.intermediate_bytes > 0 ? 100.0 * static_cast<double>(m.arena_bytes) / static_cast<double>(m.intermediate_bytes) : 0.0;
  field("arena", fmt::format("{} for {} of intermediates ({:.0f}%)", human_bytes(static_cast<double>(m.arena_bytes)),
                             human_bytes(static_cast<double>(m.intermediate_bytes)), shared));
  field("weights", fmt::format("{}, packed copies {}", human_bytes(static_cast<double>(m.weight_bytes)),
                               human_bytes(static_cast<double>(m.packed_weight_bytes))));
  if (r.profile) text += profile_text(*r.profile);
  if (baseline) {
    text += "\n";
    field("baseline", baseline_summary(*baseline));
    for (const std::string& difference : baseline->setup_differences) field("", "setup differs: " + difference);
  }
  return text;
}

}  // namespace mt::bench
