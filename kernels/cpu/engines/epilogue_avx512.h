// The output stage of epilogue.h on 16 float32 lanes (AVX-512F), for the engines' micro-kernels:
// each includes this inside its own `target("avx512f")` code. The activation is a template
// argument so that a kernel without one has no branch and no extra work.
//
// silu(x) = x / (1 + exp(-x)) with vec_math.h's exp (the same range reduction and degree-7
// polynomial, the power of two by vscalefps): within a few ulp of the portable silu, as is
// hardswish x * clamp(x + 3, 0, 6) / 6.
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/engines/epilogue.h"

namespace mt::cpu::avx512 {

// GCC 12 warns that many AVX-512 intrinsics (min, max, roundscale, scalef, rcp14) use an
// uninitialised value where they are inlined: their unused pass-through operand is
// _mm512_undefined_ps(), on purpose. Files including this one turn -Wuninitialized and
// -Wmaybe-uninitialized off around their AVX-512 code.
// min(max(v, low), high), a NaN kept as NaN (as the reference's): vmaxps/vminps return their second
// operand when either is NaN.
__attribute__((target("avx512f"), always_inline)) inline __m512 clamp(__m512 v, __m512 low, __m512 high) {
  return _mm512_min_ps(high, _mm512_max_ps(low, v));
}

// exp(x) for x in [-87.34, 100] (callers clamp): x = n ln2 + r, |r| <= ln2 / 2, 2^n applied by
// vscalefps, which gives inf past the float range; NaN stays NaN.
__attribute__((target("avx512f"), always_inline)) inline __m512 exp_in_range(__m512 x) {
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145752f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860677e-6f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// x / (1 + exp(-x)), as the portable silu. exp(-x) is taken of -x clamped to [-87.34, 100]: at the
// low end exp is still a normal float (silu is x to float precision below it), so no denormal,
// whose microcode assists would cost 3x, appears anywhere (which is also why this divides rather
// than refining vrcp14ps, whose result for 1 + exp(88) is one); at the high end exp is inf and the
// quotient -0, as the reference's. x = -inf gives -inf / inf = NaN and a NaN stays NaN, as the
// reference's.
__attribute__((target("avx512f"), always_inline)) inline __m512 silu(__m512 x) {
  const __m512 minus = clamp(_mm512_sub_ps(_mm512_setzero_ps(), x), _mm512_set1_ps(-87.33654f), _mm512_set1_ps(100.0f));
  return _mm512_div_ps(x, _mm512_add_ps(exp_in_range(minus), _mm512_set1_ps(1.0f)));
}

__attribute__((target("avx512f"), always_inline)) inline __m512 hardswish(__m512 x) {
  const __m512 gate = clamp(_mm512_add_ps(x, _mm512_set1_ps(3.0f)), _mm512_setzero_ps(), _mm512_set1_ps(6.0f));
  return _mm512_mul_ps(_mm512_mul_ps(x, gate), _mm512_set1_ps(1.0f / 6.0f));
}

template <Activation A>
__attribute__((target("avx512f"), always_inline)) inline __m512 activate(__m512 v) {
  if constexpr (A == Activation::silu) return silu(v);
  else if constexpr (A == Activation::hardswish) return hardswish(v);
  else return v;
}

// The bounds of an Epilogue as vectors, made once per micro-kernel call.
struct EpilogueBounds {
  __m512 low, high, residual_low, residual_high;
};

__attribute__((target("avx512f"), always_inline)) inline EpilogueBounds bounds_of(const Epilogue& e) {
  return {_mm512_set1_ps(e.low), _mm512_set1_ps(e.high), _mm512_set1_ps(e.residual_low),
          _mm512_set1_ps(e.residual_high)};
}

// The output stage for one vector of sums; `residual` (read under `mask`) only when Residual.
template <Activation A, bool Residual>
__attribute__((target("avx512f"), always_inline)) inline __m512 finish(__m512 sum, const EpilogueBounds& b,
                                                                       const float* residual, __mmask16 mask) {
  __m512 v = activate<A>(clamp(sum, b.low, b.high));
  if constexpr (Residual)
    v = clamp(_mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, residual)), b.residual_low, b.residual_high);
  return v;
}

}  // namespace mt::cpu::avx512

#endif  // __x86_64__
