#include "lib/passes/pipeline.h"

namespace mt::passes {

PipelineResult run_pipeline(Graph& graph, const PipelineOptions& options) {
  PipelineResult result;
  while (result.rounds < options.max_rounds) {
    ++result.rounds;
    bool changed = false;
    for (const PassInfo* pass : options.passes) {
      std::optional<Graph> saved;
      if (options.check) saved = graph;
      PassReport report = apply_pass(*pass, graph);
      report.round = result.rounds;
      const bool this_changed = report.changed();
      result.applications.push_back(std::move(report));
      if (!this_changed) continue;
      changed = true;
      if (options.check) {
        if (auto problem = options.check(graph)) {
          graph = std::move(*saved);
          result.failure = std::move(problem);
          return result;
        }
      }
    }
    if (!changed) {
      result.converged = true;
      break;
    }
  }
  return result;
}

}  // namespace mt::passes
