// What mt-prepack does to one model: fuse activations into their producers with the mt-fuse
// passes (so a model need not have been through mt-fuse), then the backend's own rewrite into
// the form it runs directly (Backend::prepack).
#pragma once

#include <cstddef>
#include <string>

#include "lib/runtime/backend.h"

namespace mt::passes {

struct PrepackOutcome {
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  size_t activations_fused = 0;  // relu/clamp nodes absorbed by fuse_activation
  size_t batch_norms_folded = 0;
};

// The passes run before the backend's rewrite, in order.
inline constexpr const char* kPrepackPasses[] = {"fold_batch_norm", "fuse_activation", "remove_dead_nodes"};

// Rewrites `graph` in place for `backend`. Throws Error(unsupported) if the backend has no
// prepacked form or the model is prepacked already (naming the backend it was packed for).
PrepackOutcome prepack(Graph& graph, const Backend& backend, const PrepackOptions& options);

}  // namespace mt::passes
