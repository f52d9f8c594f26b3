#include "lib/passes/fuse.h"

#include <fmt/format.h>

#include "lib/core/error.h"
#include "lib/runtime/prepack.h"

namespace mt::passes {
namespace {

std::map<std::string, size_t> op_counts(const Graph& graph) {
  std::map<std::string, size_t> counts;
  for (const auto& node : graph.nodes) ++counts[node.op];
  return counts;
}

}  // namespace

FuseOutcome fuse(Graph& graph, const FuseOptions& options) {
  if (options.bisect && options.verifier == nullptr)
    fail(ExitCode::usage, "--bisect needs verification (it cannot be combined with --no-verify)");
  // The passes read weights row-major; a prepacked model stores some in its backend's layouts.
  if (const auto target = packed_backend(graph))
    unsupported("the model is prepacked for backend '{}': run mt-fuse on the model from before mt-prepack", *target);
  PipelineOptions pipeline{.passes = select_passes(options.passes, options.disabled)};
  FuseOutcome outcome;
  outcome.ops_before = op_counts(graph);
  outcome.nodes_before = graph.nodes.size();

  std::optional<Verifier> verifier;
  if (options.verifier != nullptr)
    verifier.emplace(graph, *options.verifier, verification_inputs(graph, options.verify_inputs, kVerifySeed),
                     options.atol);
  if (options.bisect)
    pipeline.check = [&](const Graph& candidate) -> std::optional<std::string> {
      VerifyResult result = verifier->check(candidate);
      if (result.ok()) return std::nullopt;
      return result.message();
    };

  outcome.pipeline = run_pipeline(graph, pipeline);
  outcome.ops_after = op_counts(graph);
  outcome.nodes_after = graph.nodes.size();
  if (outcome.pipeline.failure) {
    const PassReport& culprit = outcome.pipeline.applications.back();
    outcome.failure = fmt::format("pass {} (round {}, application {}) breaks the model: {}", culprit.pass, culprit.round,
                                  outcome.pipeline.applications.size(), *outcome.pipeline.failure);
    return outcome;
  }
  if (verifier) {
    outcome.verification = verifier->check(graph);
    if (!outcome.verification->ok())
      outcome.failure = "the optimised model does not match the original: " + outcome.verification->message() +
                        " (run with --bisect to find the pass application responsible)";
  }
  return outcome;
}

nlohmann::json FuseOutcome::to_json() const {
  nlohmann::json applications = nlohmann::json::array();
  for (const auto& report : pipeline.applications) {
    nlohmann::json entry = report_json(report);
    entry["changed"] = report.changed();
    applications.push_back(std::move(entry));
  }
  nlohmann::json out = {{"nodes_before", nodes_before}, {"nodes_after", nodes_after},
                        {"ops_before", ops_before},     {"ops_after", ops_after},
                        {"rounds", pipeline.rounds},    {"converged", pipeline.converged},
                        {"applications", applications}, {"ok", ok()}};
  if (verification) {
    nlohmann::json verify = {{"outputs_compared", verification->outputs_compared},
                             {"max_abs_error", verification->worst_output_error},
                             {"ok", verification->ok()}};
    if (verification->output) verify["diverging_output"] = verification->output->tensor;
    if (verification->first_tensor) verify["first_diverging_tensor"] = verification->first_tensor->tensor;
    out["verification"] = verify;
  }
  if (!failure.empty()) out["failure"] = failure;
  return out;
}

std::string FuseOutcome::to_text() const {
  std::string text;
  for (const auto& report : pipeline.applications)
    if (report.changed()) text += report_text(report);
  text += fmt::format("{} -> {} nodes in {} round{}{}", nodes_before, nodes_after, pipeline.rounds,
                      pipeline.rounds == 1 ? "" : "s", pipeline.converged ? "" : " (stopped before a fixed point)");
  if (verification && verification->ok())
    text += fmt::format("; verified: {}", verification->message());
  text += "\n";
  return text;
}

}  // namespace mt::passes
