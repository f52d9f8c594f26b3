// How a backend plans a graph (Backend::plan): where it runs (threads, GPU, precision) and which
// kernel paths the cpu backend may take. Plain data that backends read and never look past: the
// environment variables of mt-run(1) ENVIRONMENT only set these fields, through from_environment(),
// which the tools and the C API call when they build their options.
//
// Not here: the vulkan backend's MT_VULKAN_VALIDATION, MT_VULKAN_DISABLE_FP16 and MT_CACHE_DIR,
// which configure the process-wide Vulkan instance, device list and pipeline cache that every plan
// (and --list-devices) shares, so they cannot differ between two plans of one process.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mt {

// The instruction sets mt's own cpu kernels are built for, from least to most: generic (the
// baseline of the architecture), avx2 (AVX2 + FMA: the compiled variants of portable loops), avx512
// (AVX-512 F, BW, VL, VNNI and VBMI: the packed GEMM, Winograd on it, the int8 VNNI kernels). The
// target of mt-prepack --cpu and the cap of PlanOptions::cpu_target.
enum class CpuTarget { generic, avx2, avx512 };
std::string_view cpu_target_name(CpuTarget target);
// The target a name ("generic", "avx2", "avx512") names, nullopt for any other string.
std::optional<CpuTarget> parse_cpu_target(std::string_view name);

struct PlanOptions {
  int threads = 1;                 // cpu: threads of the plan's pool (1 = run on the calling thread)
  int gpu_index = 0;               // vulkan: which physical device
  std::string precision = "fp32";  // vulkan: "fp32" or "fp16"
  bool profile = false;            // collect per-node timings on every run

  // The cpu backend's kernel paths. Each permits a path of its own, taken per layer where it pays
  // and where the CPU has the instructions (without them the field has no effect); off keeps
  // XNNPACK's operators, for A/B measurements and to test the fallback on a CPU that has them.
  // Outputs differ by rounding only (int8: XNNPACK may differ from the reference by one step).
  bool winograd = true;     // 3x3 stride-1 convs as Winograd F(4x4, 3x3) or F(2x2, 3x3) (engines/winograd_conv.h)
  bool packed_gemm = true;  // AVX-512F: convs and Winograd's products on our packed GEMM (engines/packed_gemm.h)
  bool int8_vnni = true;    // AVX512-VNNI: int8 convs, linear layers and lookup tables of our own (engines/int8_vnni.h)
  bool depthwise = true;    // AVX-512F: 3x3 and 5x5 float32 depthwise convs of our own (engines/depthwise_conv.h)
  bool stem_conv = true;    // AVX-512F: float32 convs of 1 to 4 input channels of our own (engines/stem_conv.h)
  // Our own float32 conv engines (packed GEMM, depthwise) run a following hardswish or silu node and a
  // residual add in their output stage (engines/epilogue.h) instead of as steps of their own.
  bool conv_fusion = true;
  // Plan as on a CPU with at most these instructions (of those mt's own kernels use): the paths above
  // that need more are off, and a model prepacked with layouts that need more is refused. Unset: what
  // this CPU has. For tests of the generic path and of that refusal on any machine; XNNPACK's own
  // micro-kernels are chosen by XNNPACK and stay as they are.
  std::optional<CpuTarget> cpu_target;

  // The vulkan backend's: int8 convs and linear layers on the device's int8 dot products
  // (VK_KHR_shader_integer_dot_product) where it has them: unset, where the device calls them
  // accelerated (lavapipe emulates them: 1.35x slower there than fp32 sums); true, wherever it has
  // them; false, never (the shaders unpack the weights and sum in fp32). Outputs are equal (exact
  // integer sums either way).
  std::optional<bool> vulkan_int8_dot;

  // The defaults, with the kernel paths as the environment sets them: MT_CPU_WINOGRAD (winograd),
  // MT_CPU_AVX512_GEMM (packed_gemm), MT_CPU_INT8_VNNI (int8_vnni), MT_CPU_DEPTHWISE (depthwise),
  // MT_CPU_STEM_CONV (stem_conv), MT_CPU_CONV_FUSION (conv_fusion), MT_VULKAN_INT8_DOT
  // (vulkan_int8_dot, unset when the variable is), each "1" or "0", unset for the default, and
  // MT_CPU_TARGET (cpu_target: generic, avx2 or avx512). Any other value is Error(usage) naming the
  // variable, on every machine (also one whose CPU cannot take the path), so that a typo never
  // measures the wrong thing silently.
  static PlanOptions from_environment();
};

}  // namespace mt
