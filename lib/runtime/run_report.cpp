#include "lib/runtime/run_report.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "lib/ops/valid_rows.h"
#include "lib/runtime/compare.h"

namespace mt {
namespace {

using nlohmann::json;

TensorSummary summary_of(const HostArray& array) {
  return summarize(to_doubles(array.dtype, array.data.data(), static_cast<size_t>(array.numel())));
}

json summary_json(const std::string& name, const HostArray& array) {
  const TensorSummary s = summary_of(array);
  return {{"name", name}, {"dtype", dtype_name(array.dtype)}, {"shape", array.shape}, {"min", s.min},
          {"max", s.max}, {"mean", s.mean}, {"nan_count", s.nan_count}};
}

}  // namespace

RunReport run_report(const Graph& graph, const RunResult& result, const RunReportRequest& request) {
  RunReport report;
  std::string& text = report.text;
  json& out = report.json;
  out = {{"model", request.model_name}, {"device", request.device}, {"threads", request.threads},
         {"plan_ms", result.plan_seconds * 1e3}, {"run_ms", result.run_seconds * 1e3},
         {"memory", {{"arena_bytes", result.memory.arena_bytes},
                     {"intermediate_bytes", result.memory.intermediate_bytes},
                     {"weight_bytes", result.memory.weight_bytes},
                     {"packed_weight_bytes", result.memory.packed_weight_bytes}}},
         {"outputs", json::array()}};
  const std::vector<std::string>& labels = request.labels;
  if (!labels.empty())
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const auto& shape = result.outputs[i].shape;
      if (!shape.empty() && static_cast<size_t>(shape.back()) != labels.size())
        spdlog::warn("{} has {} labels but output '{}' has {} classes", request.labels_path, labels.size(),
                     graph.outputs[i], shape.back());
    }
  const auto counts = valid_row_counts(graph, ExitCode::invalid_input);
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const HostArray& array = result.outputs[i];
    json entry = summary_json(graph.outputs[i], array);
    if (i < request.written.size() && !request.written[i].empty()) entry["file"] = request.written[i];
    // An output with a run-time row count holds its valid rows only (keep_valid_rows).
    const Shape& planned = graph.tensor(graph.outputs[i]).shape;
    const bool counted = counts.count(graph.outputs[i]) != 0;
    if (counted) entry["planned_rows"] = planned[0];
    text += fmt::format("{} {} {}{}: {}\n", graph.outputs[i], dtype_name(array.dtype), shape_str(array.shape),
                        counted ? fmt::format(" (valid rows of {})", planned[0]) : "", summary_str(summary_of(array)));
    if (request.topk > 0) {
      entry["topk"] = json::array();
      const auto rows = top_k(array, request.topk);
      for (size_t row = 0; row < rows.size(); ++row) {
        json row_json = json::array();
        text += fmt::format("  top {}{}:\n", rows[row].size(), rows.size() > 1 ? fmt::format(" of row {}", row) : "");
        for (size_t rank = 0; rank < rows[row].size(); ++rank) {
          const TopEntry& e = rows[row][rank];
          const std::string label = e.index < labels.size() ? labels[e.index] : "";
          row_json.push_back({{"index", e.index}, {"value", e.value}, {"label", label}});
          text += fmt::format("  {:>3}. {:>6} {:>12.6g}  {}\n", rank + 1, e.index, e.value, label);
        }
        entry["topk"].push_back(std::move(row_json));
      }
    }
    out["outputs"].push_back(std::move(entry));
  }

  if (request.compares.empty()) return report;
  out["compare"] = json::array();
  for (size_t c = 0; c < request.compares.size(); ++c) {
    const OutputSpec& spec = request.compares[c];
    const std::string& name = graph.outputs[spec.index];
    const CheckResult r = check_output(name, result.outputs[spec.index], request.references[c], spec.path, request.check);
    report.passed = report.passed && r.passed;
    const Comparison& cmp = r.comparison;
    out["compare"].push_back({{"output", name}, {"reference", spec.path}, {"max_abs_error", cmp.max_abs_error},
                              {"max_rel_error", cmp.max_rel_error}, {"cosine", cmp.cosine},
                              {"reference_range", cmp.expected_range()}, {"atol", r.atol}, {"rtol", request.check.rtol},
                              {"mismatches", cmp.mismatches}, {"passed", r.passed}, {"failure", r.failure}});
    text += fmt::format(
        "compare {} with {}: max abs error {:.3g}, max rel error {:.3g}, cosine {:.8f} (range {:.4g}, atol {:.3g}, rtol {:.3g}): {}\n",
        name, spec.path, cmp.max_abs_error, cmp.max_rel_error, cmp.cosine, cmp.expected_range(), r.atol,
        request.check.rtol, r.passed ? "ok" : "FAILED: " + r.failure);
  }
  out["passed"] = report.passed;
  return report;
}

}  // namespace mt
