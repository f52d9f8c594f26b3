// The backends built into this copy of mt, by name ("reference", "cpu", later "vulkan"), so that
// tools and tests choose one at run time without depending on any of them directly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/runtime/backend.h"

namespace mt {

// The backend called `name`, or nullptr if it is not built (or unknown). The object lives for
// the whole program.
const Backend* find_backend(std::string_view name);

// Names of every backend built in, "reference" first.
std::vector<std::string> backend_names();

// The backend called `name`; Error(unsupported) naming the backends built in if it is not one:
// "device 'vulkan' is not built into this mt (built: reference, cpu)".
const Backend& require_backend(std::string_view name);

}  // namespace mt
