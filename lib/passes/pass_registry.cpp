#include "lib/passes/pass_registry.h"

#include <algorithm>

#include "lib/core/error.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

// The order is the default pipeline: clean-up and folding first so the patterns see simple
// graphs; recognition before fusion, because fuse_activation would otherwise absorb the clamp
// of a hardswish into an add; recognise_global_avg_pool after recognise_layer_norm, which reads
// reduce_mean; dead nodes last.
constexpr PassInfo kPasses[] = {
    {"remove_identities", "drop no-ops: identity, same-shape reshape, identity transpose, +0, *1, empty pad/slice/resize",
     remove_identities},
    {"fold_constants", "evaluate nodes whose inputs are all constant (reference kernels) into constants", fold_constants},
    {"merge_shape_chains", "merge reshape/flatten/squeeze/unsqueeze chains into one reshape, transpose chains into one",
     merge_shape_chains},
    {"recognise_layer_norm", "replace mean/sub/pow/mean/add/sqrt/div[/mul/add] by layer_norm", recognise_layer_norm},
    {"recognise_gelu", "replace 0.5 * x * (1 + erf(x / sqrt 2)) and its tanh approximation by gelu", recognise_gelu},
    {"recognise_silu", "replace x * sigmoid(x) by silu", recognise_silu},
    {"recognise_hardsigmoid", "replace clamp(x + 3, 0, 6) / 6 by hardsigmoid", recognise_hardsigmoid},
    {"recognise_hardswish", "replace x * hardsigmoid(x) and x * clamp(x + 3, 0, 6) / 6 by hardswish", recognise_hardswish},
    {"recognise_linear", "replace matmul by a constant 2-D B (+ a constant bias add) by linear", recognise_linear},
    {"recognise_global_avg_pool", "replace reduce_mean over the spatial axes of a 4-D tensor by global_avg_pool",
     recognise_global_avg_pool},
    {"fold_batch_norm", "fold batch_norm into the preceding conv2d, conv_transpose2d, linear or matmul", fold_batch_norm},
    {"fuse_activation", "fuse relu/clamp into the preceding conv2d, conv_transpose2d, linear, add, relu or clamp",
     fuse_activation},
    {"remove_dead_nodes", "drop nodes whose outputs nothing reads, and unused tensors", remove_dead_nodes},
};

}  // namespace

std::span<const PassInfo> all_passes() { return kPasses; }

const PassInfo* find_pass(std::string_view name) {
  for (const auto& pass : kPasses)
    if (pass.name == name) return &pass;
  return nullptr;
}

std::string pass_names() {
  std::string names;
  for (const auto& pass : kPasses) names += (names.empty() ? "" : ", ") + std::string(pass.name);
  return names;
}

std::vector<const PassInfo*> select_passes(const std::vector<std::string>& names, const std::vector<std::string>& disabled) {
  auto lookup = [](const std::string& name) {
    const PassInfo* pass = find_pass(name);
    if (pass == nullptr) fail(ExitCode::usage, "unknown pass '{}' (passes: {})", name, pass_names());
    return pass;
  };
  std::vector<const PassInfo*> selected;
  if (names.empty()) {
    for (const auto& pass : kPasses) selected.push_back(&pass);
  } else {
    for (const auto& name : names) {
      const PassInfo* pass = lookup(name);
      if (std::find(selected.begin(), selected.end(), pass) == selected.end()) selected.push_back(pass);
    }
  }
  for (const auto& name : disabled) std::erase(selected, lookup(name));
  return selected;
}

PassReport apply_pass(const PassInfo& pass, Graph& graph) {
  PassReport report;
  report.pass = std::string(pass.name);
  const Graph before = graph;
  pass.run(graph, report);
  try {
    graph.infer_shapes();
    graph.validate();
  } catch (const Error& error) {
    fail(ExitCode::failure, "internal: pass {} left an invalid graph: {}", pass.name, error.what());
  }
  count_differences(before, graph, report);
  return report;
}

}  // namespace mt::passes
