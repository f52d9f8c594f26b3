// The output step every AVX512-VNNI int8 kernel shares (int8_vnni.h): 16 int32 accumulators
// requantized exactly as lib/ops/int8_arithmetic.h does it, in the same float32 operations
// (float(acc) * multiplier, clamp, round half to even in the default rounding mode, + zero point).
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/avx512_lanes.h"

// The instruction sets the kernels are compiled for, per function: the rest of the binary stays
// baseline x86-64 and int8_vnni_enabled() decides at run time.
#define MT_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

// Around code that uses the AVX-512 intrinsics: GCC 12 warns that _mm512_min_ps, _mm512_max_ps
// and others use an uninitialised value, their unused pass-through operand _mm512_undefined_*(),
// on purpose.
#if defined(__clang__)
#define MT_AVX512_INTRINSICS_BEGIN _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")
#else  // -Wmaybe-uninitialized is a GCC-only warning group
#define MT_AVX512_INTRINSICS_BEGIN                                                     \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#endif
#define MT_AVX512_INTRINSICS_END _Pragma("GCC diagnostic pop")

MT_AVX512_INTRINSICS_BEGIN
namespace mt::cpu::vnni {

// The clamp and zero point of Int8Output as vectors.
struct OutputVectors {
  __m512 low, high;
  __m512i zero;
};

MT_VNNI_TARGET inline OutputVectors output_vectors(const Int8Output& out) {
  return {_mm512_set1_ps(static_cast<float>(out.low - out.zero_point)),
          _mm512_set1_ps(static_cast<float>(out.high - out.zero_point)), _mm512_set1_epi32(out.zero_point)};
}

// Requantizes float(acc) (`value`, exact) with 16 multipliers and stores the lanes `mask` selects
// as int8 at dst.
MT_VNNI_TARGET inline void requantize_float_store(int8_t* dst, __mmask16 mask, __m512 value, __m512 multiplier,
                                                  const OutputVectors& o) {
  __m512 v = _mm512_mul_ps(value, multiplier);
  v = _mm512_min_ps(_mm512_max_ps(v, o.low), o.high);
  _mm_mask_storeu_epi8(dst, mask, _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), o.zero)));
}

// Requantizes acc with 16 multipliers and stores the lanes `mask` selects as int8 at dst.
MT_VNNI_TARGET inline void requantize_store(int8_t* dst, __mmask16 mask, __m512i acc, __m512 multiplier,
                                            const OutputVectors& o) {
  requantize_float_store(dst, mask, _mm512_cvtepi32_ps(acc), multiplier, o);
}

// The fused add's constants (Int8ResidualAdd) as vectors.
struct AddVectors {
  __m512 c_multiplier, r_multiplier;
  __m512i r_zero;
  OutputVectors out;
};

MT_VNNI_TARGET inline AddVectors add_vectors(const Int8ResidualAdd& add) {
  return {_mm512_set1_ps(add.c_multiplier), _mm512_set1_ps(add.r_multiplier), _mm512_set1_epi32(add.r_zero),
          output_vectors(add.out)};
}

// As requantize_store, then the fused add of the lanes' residual bytes at r (Int8ResidualAdd).
// The _round_ forms (in the current rounding mode, i.e. the plain operations) keep the compiler
// from contracting the products and their sum into FMAs, which round once where the reference
// rounds three times.
MT_VNNI_TARGET inline void requantize_add_store(int8_t* dst, const int8_t* r, __mmask16 mask, __m512i acc,
                                                __m512 multiplier, const OutputVectors& o, const AddVectors& a) {
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), multiplier);
  v = _mm512_min_ps(_mm512_max_ps(v, o.low), o.high);
  const __m512 c = _mm512_cvtepi32_ps(_mm512_cvtps_epi32(v));  // c - c_zero, rounded half to even
  const __m512i residual = _mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, r)), a.r_zero);
  __m512 sum = _mm512_add_round_ps(_mm512_mul_round_ps(c, a.c_multiplier, _MM_FROUND_CUR_DIRECTION),
                                   _mm512_mul_round_ps(_mm512_cvtepi32_ps(residual), a.r_multiplier,
                                                       _MM_FROUND_CUR_DIRECTION),
                                   _MM_FROUND_CUR_DIRECTION);
  sum = _mm512_min_ps(_mm512_max_ps(sum, a.out.low), a.out.high);
  _mm_mask_storeu_epi8(dst, mask, _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(sum), a.out.zero)));
}

}  // namespace mt::cpu::vnni
MT_AVX512_INTRINSICS_END
#endif
