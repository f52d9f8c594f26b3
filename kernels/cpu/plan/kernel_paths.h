// Which of mt's own cpu kernel paths a plan takes: what PlanOptions permits, where this CPU has the
// instructions, capped by PlanOptions::cpu_target; and which a CPU of a given target would take
// (mt-prepack --cpu). Op planners decide by these, and so does mt-prepack, through the same
// functions (packed_forms.h), so that it stores weights in the form a plan on such a CPU reads.
#pragma once

#include "lib/runtime/plan_options.h"

namespace mt::cpu {

struct KernelPaths {
  bool winograd = true;      // 3x3 stride-1 convs as Winograd (engines/winograd_conv.h)
  bool packed_gemm = false;  // AVX-512F: our packed GEMM (engines/packed_gemm.h)
  bool int8_vnni = false;    // AVX512-VNNI, BW, VL and VBMI: our int8 kernels (engines/int8_vnni.h)
  bool avx2_fma = false;     // AVX2 + FMA: the compiled variants of portable loops
  bool depthwise = false;    // AVX-512F: our float32 depthwise convs (engines/depthwise_conv.h)
  bool stem_conv = false;    // AVX-512F: our float32 convs of 1 to 4 input channels (engines/stem_conv.h)
  bool conv_fusion = true;   // our float32 conv engines run the following activation and add (ops/conv_fusion.h)
};

// The best target this CPU runs every kernel of: avx512, avx2 or generic (aarch64: generic).
CpuTarget native_target();

// The paths a CPU of `target` takes with every path permitted.
KernelPaths target_paths(CpuTarget target);

// The paths a plan with `options` takes on this CPU.
KernelPaths plan_paths(const PlanOptions& options);

}  // namespace mt::cpu
