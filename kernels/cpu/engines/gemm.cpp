#include "kernels/cpu/engines/gemm.h"

#include <algorithm>

namespace mt::cpu {
namespace {

constexpr size_t kColumns = 128;  // accumulators per row live in L1: kRows x kColumns floats

template <size_t kRows>
void block(size_t n0, size_t width, size_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c,
           size_t ldc, const float* bias) {
  float acc[kRows][kColumns];
  for (size_t r = 0; r < kRows; ++r)
    for (size_t j = 0; j < width; ++j) acc[r][j] = bias != nullptr ? bias[n0 + j] : 0.0f;
  for (size_t p = 0; p < k; ++p) {
    const float* row = b + p * ldb + n0;
    float scalars[kRows];
    for (size_t r = 0; r < kRows; ++r) scalars[r] = a[r * lda + p];
    for (size_t r = 0; r < kRows; ++r) {
      const float s = scalars[r];
      float* out = acc[r];
      for (size_t j = 0; j < width; ++j) out[j] += s * row[j];
    }
  }
  for (size_t r = 0; r < kRows; ++r) std::copy(acc[r], acc[r] + width, c + r * ldc + n0);
}

}  // namespace

void gemm(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc,
          const float* bias) {
  for (size_t n0 = 0; n0 < n; n0 += kColumns) {
    const size_t width = std::min(kColumns, n - n0);
    size_t i = 0;
    for (; i + 4 <= m; i += 4) block<4>(n0, width, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, bias);
    for (; i < m; ++i) block<1>(n0, width, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, bias);
  }
}

}  // namespace mt::cpu
