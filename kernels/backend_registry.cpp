// The registry of built-in backends. Each backend library other than the reference is optional:
// kernels/CMakeLists.txt defines MT_HAVE_<NAME>_BACKEND when its library is part of the build.
#include "lib/runtime/backend_registry.h"

#include <fmt/format.h>

#include <memory>

#include "kernels/reference/reference_backend.h"
#include "lib/core/error.h"
#ifdef MT_HAVE_CPU_BACKEND
#include "kernels/cpu/cpu_backend.h"
#endif
#ifdef MT_HAVE_VULKAN_BACKEND
#include "kernels/vulkan/vulkan_backend.h"
#endif

namespace mt {
namespace {

const std::vector<std::unique_ptr<Backend>>& backends() {
  static const std::vector<std::unique_ptr<Backend>> all = [] {
    std::vector<std::unique_ptr<Backend>> list;
    list.push_back(make_reference_backend());
#ifdef MT_HAVE_CPU_BACKEND
    list.push_back(make_cpu_backend());
#endif
#ifdef MT_HAVE_VULKAN_BACKEND
    list.push_back(make_vulkan_backend());
#endif
    return list;
  }();
  return all;
}

}  // namespace

const Backend* find_backend(std::string_view name) {
  for (const auto& backend : backends())
    if (backend->name() == name) return backend.get();
  return nullptr;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const auto& backend : backends()) names.emplace_back(backend->name());
  return names;
}

const Backend& require_backend(std::string_view name) {
  const Backend* backend = find_backend(name);
  if (backend == nullptr) unsupported("device '{}' is not built into this mt (built: {})", name, fmt::join(backend_names(), ", "));
  return *backend;
}

}  // namespace mt
