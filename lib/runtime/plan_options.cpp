#include "lib/runtime/plan_options.h"

#include <cstdlib>
#include <string_view>

#include "lib/core/error.h"

namespace mt {
namespace {

// A "0" or "1" variable; unset: `fallback`.
bool switch_from_environment(const char* name, bool fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr) return fallback;
  const std::string_view v(value);
  if (v == "1") return true;
  if (v == "0") return false;
  fail(ExitCode::usage, "{} must be 0 or 1, got '{}'", name, v);
}

}  // namespace

PlanOptions PlanOptions::from_environment() {
  PlanOptions options;
  options.winograd = switch_from_environment("MT_CPU_WINOGRAD", options.winograd);
  options.packed_gemm = switch_from_environment("MT_CPU_AVX512_GEMM", options.packed_gemm);
  options.int8_vnni = switch_from_environment("MT_CPU_INT8_VNNI", options.int8_vnni);
  if (std::getenv("MT_VULKAN_INT8_DOT") != nullptr)
    options.vulkan_int8_dot = switch_from_environment("MT_VULKAN_INT8_DOT", true);
  return options;
}

}  // namespace mt
