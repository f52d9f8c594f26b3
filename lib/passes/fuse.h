// What mt-fuse does to one model: choose passes, run them to a fixed point (checking each
// application with --bisect), verify the result against the original, and report it all.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "lib/io/npy.h"
#include "lib/passes/pipeline.h"
#include "lib/passes/verify.h"

namespace mt::passes {

inline constexpr uint64_t kVerifySeed = 20240601;

struct FuseOptions {
  std::vector<std::string> passes;    // empty: the default pipeline
  std::vector<std::string> disabled;  // removed from the selection
  const Backend* verifier = nullptr;  // nullptr: no verification (--no-verify)
  std::map<std::string, HostArray> verify_inputs;  // by input name; the others are seeded random
  double atol = -1;                   // < 0: range-relative tolerance (verify.h)
  bool bisect = false;                // verify after every application that changes the graph
};

struct FuseOutcome {
  PipelineResult pipeline;
  std::map<std::string, size_t> ops_before;
  std::map<std::string, size_t> ops_after;
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  std::optional<VerifyResult> verification;  // of the final graph, when verifying
  std::string failure;                        // non-empty: the model is broken (bisect or verification)

  bool ok() const { return failure.empty(); }
  nlohmann::json to_json() const;
  std::string to_text() const;  // the changed applications, then a summary line
};

// Rewrites `graph` in place. On a failure the outcome says why and `graph` should not be written
// (with --bisect it is the last graph that still verified).
FuseOutcome fuse(Graph& graph, const FuseOptions& options);

}  // namespace mt::passes
