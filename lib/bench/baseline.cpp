#include "lib/bench/baseline.h"

#include <fmt/format.h>

#include "lib/core/error.h"
#include "lib/core/file_io.h"

namespace mt::bench {
namespace {

using nlohmann::json;

// The value at a path of object keys, or nullptr when a key is missing.
const json* find_path(const json& root, std::initializer_list<const char*> keys) {
  const json* node = &root;
  for (const char* key : keys) {
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &(*node)[key];
  }
  return node;
}

void note_difference(std::vector<std::string>& notes, const json& baseline, std::initializer_list<const char*> keys,
                     const std::string& what, const json& current) {
  const json* old = find_path(baseline, keys);
  if (old != nullptr && *old != current) notes.push_back(fmt::format("{} {} vs {}", what, current.dump(), old->dump()));
}

}  // namespace

json read_baseline(const std::string& path) {
  const InputBytes bytes = read_input(path);
  json report;
  try {
    report = json::parse(reinterpret_cast<const char*>(bytes.data), reinterpret_cast<const char*>(bytes.data) + bytes.size);
  } catch (const json::exception& e) {
    invalid_input("{}: not a JSON report of mt-bench: {}", bytes.source, e.what());
  }
  const json* median = find_path(report, {"timing", "latency_ms", "median"});
  if (median == nullptr || !median->is_number() || median->get<double>() <= 0)
    invalid_input("{}: no positive timing.latency_ms.median; expected a report of mt-bench --format json", bytes.source);
  return report;
}

BaselineCheck check_baseline(const json& baseline, const std::string& path, const BenchResult& current,
                             double max_regression_percent) {
  BaselineCheck check;
  check.path = path;
  check.baseline_median_seconds = (*find_path(baseline, {"timing", "latency_ms", "median"})).get<double>() / 1e3;
  check.current_median_seconds = current.latency.median;
  check.ratio = check.current_median_seconds / check.baseline_median_seconds;
  check.max_regression_percent = max_regression_percent;
  check.regressed = check.ratio > 1.0 + max_regression_percent / 100.0;
  auto& notes = check.setup_differences;
  note_difference(notes, baseline, {"model", "sha256"}, "model sha256", current.model.sha256);
  note_difference(notes, baseline, {"setup", "device"}, "device", current.backend);
  if (current.backend == "vulkan") {
    note_difference(notes, baseline, {"setup", "gpu_name"}, "GPU", current.gpu_name);
    note_difference(notes, baseline, {"setup", "precision"}, "precision", current.options.plan.precision);
  }
  note_difference(notes, baseline, {"setup", "threads"}, "threads", current.options.plan.threads);
  note_difference(notes, baseline, {"system", "cpu_model"}, "cpu", current.system.cpu_model);
  return check;
}

std::string baseline_summary(const BaselineCheck& check) {
  return fmt::format("median {:.3f} ms vs baseline {:.3f} ms ({}): ratio {:.3f}, allowed {:.3f}: {}",
                     check.current_median_seconds * 1e3, check.baseline_median_seconds * 1e3, check.path, check.ratio,
                     1.0 + check.max_regression_percent / 100.0, check.regressed ? "REGRESSION" : "ok");
}

}  // namespace mt::bench
