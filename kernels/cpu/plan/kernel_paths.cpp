#include "kernels/cpu/plan/kernel_paths.h"

#include "kernels/cpu/engines/depthwise_conv.h"
#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/engines/stem_conv.h"
#include "kernels/cpu/ops/unary_portable.h"

namespace mt::cpu {

CpuTarget native_target() {
  if (!cpu_has_avx2_fma()) return CpuTarget::generic;
  return packed_gemm_supported() && int8_vnni_supported() ? CpuTarget::avx512 : CpuTarget::avx2;
}

KernelPaths target_paths(CpuTarget target) {
  return KernelPaths{.winograd = true,
                     .packed_gemm = target == CpuTarget::avx512,
                     .int8_vnni = target == CpuTarget::avx512,
                     .avx2_fma = target != CpuTarget::generic,
                     .depthwise = target == CpuTarget::avx512,
                     .stem_conv = target == CpuTarget::avx512,
                     .conv_fusion = true};
}

KernelPaths plan_paths(const PlanOptions& options) {
  // Without a cap, every instruction this CPU has: an AVX-512F CPU without VNNI keeps the packed GEMM.
  const KernelPaths cap = options.cpu_target ? target_paths(*options.cpu_target) : target_paths(CpuTarget::avx512);
  return KernelPaths{.winograd = options.winograd,
                     .packed_gemm = options.packed_gemm && cap.packed_gemm && packed_gemm_supported(),
                     .int8_vnni = options.int8_vnni && cap.int8_vnni && int8_vnni_supported(),
                     .avx2_fma = cap.avx2_fma && cpu_has_avx2_fma(),
                     .depthwise = options.depthwise && cap.depthwise && depthwise_supported(),
                     .stem_conv = options.stem_conv && cap.stem_conv && stem_conv_supported(),
                     .conv_fusion = options.conv_fusion};
}

}  // namespace mt::cpu
