#include "lib/runtime/plan_options.h"

#include <cstdlib>
#include <iterator>
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

constexpr std::string_view kTargetNames[] = {"generic", "avx2", "avx512"};

}  // namespace

std::string_view cpu_target_name(CpuTarget target) { return kTargetNames[static_cast<size_t>(target)]; }

std::optional<CpuTarget> parse_cpu_target(std::string_view name) {
  for (size_t i = 0; i < std::size(kTargetNames); ++i)
    if (kTargetNames[i] == name) return static_cast<CpuTarget>(i);
  return std::nullopt;
}

PlanOptions PlanOptions::from_environment() {
  PlanOptions options;
  options.winograd = switch_from_environment("MT_CPU_WINOGRAD", options.winograd);
  options.packed_gemm = switch_from_environment("MT_CPU_AVX512_GEMM", options.packed_gemm);
  options.int8_vnni = switch_from_environment("MT_CPU_INT8_VNNI", options.int8_vnni);
  options.depthwise = switch_from_environment("MT_CPU_DEPTHWISE", options.depthwise);
  options.stem_conv = switch_from_environment("MT_CPU_STEM_CONV", options.stem_conv);
  options.conv_fusion = switch_from_environment("MT_CPU_CONV_FUSION", options.conv_fusion);
  if (const char* value = std::getenv("MT_CPU_TARGET")) {
    options.cpu_target = parse_cpu_target(value);
    if (!options.cpu_target) fail(ExitCode::usage, "MT_CPU_TARGET must be generic, avx2 or avx512, got '{}'", value);
  }
  if (std::getenv("MT_VULKAN_INT8_DOT") != nullptr)
    options.vulkan_int8_dot = switch_from_environment("MT_VULKAN_INT8_DOT", true);
  return options;
}

}  // namespace mt
