// Runs a list of passes over a graph round after round until none changes anything (a fixed
// point), optionally checking the graph after every application that changed it (--bisect).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/passes/pass_registry.h"

namespace mt::passes {

inline constexpr int kMaxRounds = 10;

struct PipelineOptions {
  std::vector<const PassInfo*> passes;
  int max_rounds = kMaxRounds;
  // Called with the graph after every application that changed it; a message means the graph is
  // broken: the pipeline stops and leaves the graph as it was before that application.
  std::function<std::optional<std::string>(const Graph& graph)> check;
};

struct PipelineResult {
  std::vector<PassReport> applications;  // every application, in order, changed or not
  int rounds = 0;
  bool converged = false;  // the last round changed nothing
  // Set when `check` rejected an application (the last entry of `applications`): its message.
  std::optional<std::string> failure;
};

PipelineResult run_pipeline(Graph& graph, const PipelineOptions& options);

}  // namespace mt::passes
