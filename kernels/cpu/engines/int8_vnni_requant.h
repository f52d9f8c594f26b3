// The output step every AVX512-VNNI int8 kernel shares (int8_vnni.h): 16 int32 accumulators
// requantized exactly as lib/ops/int8_arithmetic.h does it, in the same float32 operations
// (float(acc) * multiplier, clamp, round half to even in the default rounding mode, + zero point).
#pragma once

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/engines/int8_vnni.h"

// The instruction sets the kernels are compiled for, per function: the rest of the binary stays
// baseline x86-64 and int8_vnni_enabled() decides at run time.
#define MT_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))

// GCC 12 warns that _mm512_min_ps/_mm512_max_ps use an uninitialised value: their unused
// pass-through operand is _mm512_undefined_ps(), on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
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

// Requantizes acc with 16 multipliers and stores the lanes `mask` selects as int8 at dst.
MT_VNNI_TARGET inline void requantize_store(int8_t* dst, __mmask16 mask, __m512i acc, __m512 multiplier,
                                            const OutputVectors& o) {
  __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), multiplier);
  v = _mm512_min_ps(_mm512_max_ps(v, o.low), o.high);
  _mm_mask_storeu_epi8(dst, mask, _mm512_cvtsepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), o.zero)));
}

inline __mmask16 lanes(size_t count) {  // the low `count` (0..16) lanes
  return count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1);
}

}  // namespace mt::cpu::vnni
#pragma GCC diagnostic pop
#endif
