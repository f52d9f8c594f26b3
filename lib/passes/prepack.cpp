#include "lib/passes/prepack.h"

#include "lib/core/error.h"
#include "lib/passes/pipeline.h"

namespace mt::passes {

PrepackOutcome prepack(Graph& graph, const Backend& backend, const PrepackOptions& options) {
  if (!backend.can_prepack()) unsupported("backend '{}' has no prepacked form", backend.name());
  if (const auto target = packed_backend(graph))
    unsupported("the model is prepacked for backend '{}' already: run mt-prepack on the model from before it", *target);

  PrepackOutcome outcome;
  outcome.nodes_before = graph.nodes.size();
  PipelineOptions pipeline;
  for (const char* name : kPrepackPasses) pipeline.passes.push_back(find_pass(name));
  for (const PassReport& report : run_pipeline(graph, pipeline).applications) {
    if (report.pass == "fuse_activation") outcome.activations_fused += report.nodes_removed;
    if (report.pass == "fold_batch_norm") outcome.batch_norms_folded += report.nodes_removed;
  }
  backend.prepack(graph, options);
  graph.validate();
  outcome.nodes_after = graph.nodes.size();
  return outcome;
}

}  // namespace mt::passes
