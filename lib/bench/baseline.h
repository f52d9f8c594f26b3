// The regression gate: compares this run's median latency with a stored mt-bench JSON report
// and says whether it is slower by more than the allowed percentage.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lib/bench/benchmark.h"

namespace mt::bench {

struct BaselineCheck {
  std::string path;
  double baseline_median_seconds = 0;
  double current_median_seconds = 0;
  double ratio = 0;                   // current / baseline; above 1 is slower
  double max_regression_percent = 0;  // allowed: ratio <= 1 + max / 100
  bool regressed = false;
  std::vector<std::string> setup_differences;  // "threads 1 vs 2": results may not be comparable
};

// Reads a report written by mt-bench --format json. Error(invalid_input) naming the file when it
// is not JSON or has no positive timing.latency_ms.median.
nlohmann::json read_baseline(const std::string& path);

BaselineCheck check_baseline(const nlohmann::json& baseline, const std::string& path, const BenchResult& current,
                             double max_regression_percent);

// "median 12.3 ms vs baseline 10.0 ms (OLD.json): ratio 1.23, allowed 1.10: REGRESSION"
std::string baseline_summary(const BaselineCheck& check);

}  // namespace mt::bench
