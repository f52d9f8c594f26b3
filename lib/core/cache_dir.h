// The per-user cache directory of mt's tools (vulkan pipeline caches, mt-bench's machine peak):
// $MT_CACHE_DIR, else $XDG_CACHE_HOME/mt (when absolute), else $HOME/.cache/mt.
#pragma once

#include <string>

namespace mt {

// The directory (not created here); "" when MT_CACHE_DIR is set but empty (no cache files wanted)
// or none of the three variables is usable.
std::string cache_directory();

}  // namespace mt
