// int8_lookup of int8_vnni.h: a 256-entry byte table applied 64 bytes at a time with AVX512-VBMI's
// two-source byte permutes (vpermi2b over each half of the table, the input's top bit choosing
// the half), instead of one scalar load per byte.
#include <cstring>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "lib/core/error.h"

namespace mt::cpu {

#if defined(__x86_64__)
namespace {

// Rows [0, rows) of n bytes, `stride` apart in src and dst.
MT_VNNI_TARGET void lookup(const int8_t* table, const int8_t* src, int8_t* dst, size_t rows, size_t stride, size_t n) {
  // Entry q + 128 of the table is the output for input q: indices are the inputs flipped to unsigned.
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  for (size_t r = 0; r < rows; ++r, src += stride, dst += stride)
    for (size_t i = 0; i < n; i += 64) {
      const __mmask64 mask = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
      const __m512i index = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, src + i), flip);
      const __m512i low = _mm512_permutex2var_epi8(t0, index, t1);   // entries 0..127 (bit 6 picks t1)
      const __m512i high = _mm512_permutex2var_epi8(t2, index, t3);  // entries 128..255
      const __mmask64 upper = _mm512_movepi8_mask(index);            // bit 7 of the index
      _mm512_mask_storeu_epi8(dst + i, mask, _mm512_mask_blend_epi8(upper, low, high));
    }
}

}  // namespace
#endif

void int8_lookup(const int8_t* table, const int8_t* src, int8_t* dst, size_t n) {
#if defined(__x86_64__)
  lookup(table, src, dst, 1, 0, n);
#else
  (void)table, (void)src, (void)dst, (void)n;
  fail(ExitCode::failure, "internal: int8_lookup needs AVX512-VBMI");
#endif
}

void int8_lookup_rows(const int8_t* table, const int8_t* src, int8_t* dst, size_t rows, size_t stride, size_t n) {
#if defined(__x86_64__)
  lookup(table, src, dst, rows, stride, n);
#else
  (void)table, (void)src, (void)dst, (void)rows, (void)stride, (void)n;
  fail(ExitCode::failure, "internal: int8_lookup_rows needs AVX512-VBMI");
#endif
}

}  // namespace mt::cpu
