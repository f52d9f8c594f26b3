// The reference backend: runs a graph node by node through the reference kernels (lib/ops/eval:
// the op semantics), with every intermediate tensor in one liveness-planned arena. Slow and
// obviously correct: the oracle.
#pragma once

#include <memory>

#include "lib/runtime/backend.h"

namespace mt {

std::unique_ptr<Backend> make_reference_backend();

}  // namespace mt
