// int8_mul of int8_vnni.h. Per 16 values: (a - a_zero) and (b - b_zero) as int32, converted to
// float32 (exact: |x| <= 255) and multiplied there (exact: the product's magnitude is below 2^17),
// which is float(the int32 product) as the reference forms it, then requantized as every VNNI
// kernel does (int8_vnni_requant.h).
#include <algorithm>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

#if defined(__x86_64__)
MT_AVX512_INTRINSICS_BEGIN
namespace {

constexpr size_t kConvertedB = 2048;  // b values converted once per row of b, when a row has at most these

// Rows [begin, end) of the outer x repeat rows.
MT_VNNI_TARGET void mul_rows(const int8_t* a, const int8_t* b, int8_t* y, size_t repeat, size_t inner,
                             const Int8MulParams& params, size_t begin, size_t end) {
  const __m512i a_zero = _mm512_set1_epi32(params.a_zero), b_zero = _mm512_set1_epi32(params.b_zero);
  const __m512 multiplier = _mm512_set1_ps(params.multiplier);
  const vnni::OutputVectors o = vnni::output_vectors(params.out);
  auto convert = [&](const int8_t* values, const __m512i& zero, __mmask16 mask) MT_VNNI_TARGET {
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, values)), zero));
  };
  // A row of b read by several rows of a (squeeze-excitation's scale): converted to float once.
  alignas(64) float converted[kConvertedB];
  const bool reuse = repeat > 1 && inner <= kConvertedB;
  size_t converted_row = SIZE_MAX;
  for (size_t row = begin; row < end; ++row) {
    const int8_t* a_row = a + row * inner;
    const int8_t* b_row = b + row / repeat * inner;
    int8_t* y_row = y + row * inner;
    if (reuse && converted_row != row / repeat) {
      converted_row = row / repeat;
      for (size_t i = 0; i < inner; i += 16) {
        const __mmask16 mask = low_lanes(inner - i);
        _mm512_mask_storeu_ps(converted + i, mask, convert(b_row + i, b_zero, mask));
      }
    }
    for (size_t i = 0; i < inner; i += 16) {
      const __mmask16 mask = low_lanes(inner - i);
      const __m512 bv = reuse ? _mm512_maskz_loadu_ps(mask, converted + i) : convert(b_row + i, b_zero, mask);
      vnni::requantize_float_store(y_row + i, mask, _mm512_mul_ps(convert(a_row + i, a_zero, mask), bv), multiplier, o);
    }
  }
}

}  // namespace
MT_AVX512_INTRINSICS_END
#endif

void int8_mul(const int8_t* a, const int8_t* b, int8_t* y, size_t outer, size_t repeat, size_t inner,
              const Int8MulParams& params, ThreadPool* pool) {
#if defined(__x86_64__)
  const size_t rows = outer * repeat;
  parallel_chunks(pool, rows, std::max<size_t>(1, 16384 / std::max<size_t>(1, inner)),
                  [&](size_t begin, size_t end) { mul_rows(a, b, y, repeat, inner, params, begin, end); });
#else
  (void)a, (void)b, (void)y, (void)outer, (void)repeat, (void)inner, (void)params, (void)pool;
  fail(ExitCode::failure, "internal: int8_mul needs AVX512-VNNI");
#endif
}

}  // namespace mt::cpu
