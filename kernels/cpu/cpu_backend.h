// The cpu backend: XNNPACK operators on NHWC activations plus portable kernels for what XNNPACK
// lacks, one arena per plan, the plan's thread pool.
#pragma once

#include <memory>

#include "lib/runtime/backend.h"

namespace mt {

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace mt
