// Every pass mt-fuse knows, by name, with a one-line description, in the order of the default
// pipeline; and apply_pass(), which runs one pass and reports what it changed.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lib/ir/graph.h"
#include "lib/passes/pass_report.h"

namespace mt::passes {

using PassFn = void (*)(Graph& graph, PassReport& report);

struct PassInfo {
  std::string_view name;
  std::string_view description;
  PassFn run;
};

// All passes, in default pipeline order.
std::span<const PassInfo> all_passes();
// The pass called `name`, or nullptr.
const PassInfo* find_pass(std::string_view name);
// Comma-separated names of every pass, for messages.
std::string pass_names();

// The passes named in `names` (in that order; all passes in default order when empty), minus those
// in `disabled`. Unknown names are usage errors listing the valid ones.
std::vector<const PassInfo*> select_passes(const std::vector<std::string>& names, const std::vector<std::string>& disabled);

// Runs one pass on `graph`, re-infers shapes and validates the result (a pass that leaves an
// invalid graph is an internal error naming it), and returns its report with the counts filled.
PassReport apply_pass(const PassInfo& pass, Graph& graph);

}  // namespace mt::passes
