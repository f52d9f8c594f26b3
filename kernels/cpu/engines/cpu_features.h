// The CPU features our own kernels are chosen by at run time (x86-only code compiles out
// elsewhere and these say no).
#pragma once

namespace mt::cpu {

inline bool cpu_has_avx512f() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported;
#else
  return false;
#endif
}

}  // namespace mt::cpu
