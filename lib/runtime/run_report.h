// mt-run's report of one inference, put together in one place: per output its summary, the file
// written, the top-k classes with labels, and the checks against reference arrays, as the text
// summary and as the JSON object of --json (mt-run(1), OUTPUT).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lib/io/npy.h"
#include "lib/ir/graph.h"
#include "lib/runtime/report.h"
#include "lib/runtime/run_once.h"

namespace mt {

struct RunReportRequest {
  std::string model_name;  // as given; "<stdin>" for standard input
  std::string device;
  int threads = 1;
  std::vector<std::string> written;  // per graph output: the file written, "" for none
  size_t topk = 0;                   // 0: no top-k
  std::vector<std::string> labels;   // class names for top-k; empty: none
  std::string labels_path;           // where they came from (the warning on a class count mismatch)
  std::vector<OutputSpec> compares;  // --compare: the outputs checked...
  std::vector<HostArray> references; // ...against these arrays, in the same order
  CheckOptions check;
};

struct RunReport {
  std::string text;     // the summary mt-run prints without --json
  nlohmann::json json;  // the object it prints with --json
  bool passed = true;   // every check passed (true without checks)
};

// The report of `result`, a run of `graph`. Warns (spdlog) when the labels do not match an
// output's class count; a reference whose dtype or shape differs from its output is
// Error(invalid_input) (check_output), before anything is printed.
RunReport run_report(const Graph& graph, const RunResult& result, const RunReportRequest& request);

}  // namespace mt
