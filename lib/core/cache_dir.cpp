#include "lib/core/cache_dir.h"

#include <cstdlib>
#include <filesystem>

namespace mt {

std::string cache_directory() {
  if (const char* own = std::getenv("MT_CACHE_DIR"); own != nullptr) return own;  // "" (set empty): none
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return (std::filesystem::path(xdg) / "mt").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0')
    return (std::filesystem::path(home) / ".cache" / "mt").string();
  return "";
}

}  // namespace mt
