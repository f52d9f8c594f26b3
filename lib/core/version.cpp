#include "lib/core/version.h"

#include <fmt/format.h>

#include "mt/version.h"

namespace mt {

const char* version_string() { return MT_VERSION_STRING; }

std::string version_details() {
#if defined(__clang__)
  const std::string compiler = fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  const std::string compiler = fmt::format("gcc {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  const std::string compiler = "unknown compiler";
#endif
  return fmt::format("mt {} (git {}, {})", MT_VERSION_STRING, MT_GIT_DESCRIBE, compiler);
}

}  // namespace mt
