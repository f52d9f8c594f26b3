// The packed GEMM of packed_gemm.h. The micro-kernel computes 8 (or fewer, at the bottom edge)
// rows by one 32-column panel over the whole k: per step it loads the panel's 32 weights once and
// broadcasts one value of each row, 16 FMAs for 10 loads. Work is ordered panel by panel so that
// a panel (k x 128 bytes) stays in cache while every row block passes over it.
#include "kernels/cpu/packed_gemm.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "kernels/cpu/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kPanel = 32;  // columns per panel
constexpr size_t kRows = 8;    // rows per micro-kernel call

bool packed_gemm_enabled() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512f");
#else
  constexpr bool supported = false;
#endif
  const char* value = std::getenv("MT_CPU_AVX512_GEMM");
  if (value != nullptr) {
    const std::string_view v(value);
    if (v == "0") return false;
    if (v != "1") fail(ExitCode::usage, "MT_CPU_AVX512_GEMM must be 0 or 1, got '{}'", v);
  }
  return supported;
}

size_t packed_gemm_bytes(size_t k, size_t n) {
  const size_t panels = (n + kPanel - 1) / kPanel;
  return (panels * k * kPanel + panels * kPanel) * sizeof(float);
}

PackedWeights pack_gemm_weights(void* memory, const float* w, size_t ldw, const float* bias, size_t k, size_t n) {
  const size_t panels = (n + kPanel - 1) / kPanel;
  auto* p = static_cast<float*>(memory);
  std::memset(p, 0, packed_gemm_bytes(k, n));
  for (size_t j = 0; j < n; ++j) {
    float* column = p + (j / kPanel) * k * kPanel + j % kPanel;
    for (size_t i = 0; i < k; ++i) column[i * kPanel] = w[j * ldw + i];
  }
  float* b = p + panels * k * kPanel;
  if (bias != nullptr) std::memcpy(b, bias, n * sizeof(float));
  return PackedWeights{.panels = p, .bias = b, .k = k, .n = n};
}

#if defined(__x86_64__)
// GCC 12 warns that _mm512_min_ps/_mm512_max_ps use an uninitialised value: their unused
// pass-through operand is _mm512_undefined_ps(), on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
namespace {

// Rows [0, R) of C's columns [0, 32) (stores masked by mask0/mask1) from R rows of A and one panel.
template <size_t R>
__attribute__((target("avx512f"))) void micro_kernel(size_t k, const float* a, size_t lda, const float* panel,
                                                     const float* bias, float* c, size_t ldc, __mmask16 mask0,
                                                     __mmask16 mask1, float low, float high) {
  __m512 acc0[R], acc1[R];
  const float* row[R];
  const __m512 bias0 = _mm512_loadu_ps(bias), bias1 = _mm512_loadu_ps(bias + 16);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
    row[r] = a + r * lda;
  }
  for (size_t i = 0; i < k; ++i) {
    const __m512 b0 = _mm512_loadu_ps(panel), b1 = _mm512_loadu_ps(panel + 16);
    panel += kPanel;
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(row[r][i]);
      acc0[r] = _mm512_fmadd_ps(x, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(x, b1, acc1[r]);
    }
  }
  const __m512 lo = _mm512_set1_ps(low), hi = _mm512_set1_ps(high);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, mask0, _mm512_min_ps(_mm512_max_ps(acc0[r], lo), hi));
    _mm512_mask_storeu_ps(c + r * ldc + 16, mask1, _mm512_min_ps(_mm512_max_ps(acc1[r], lo), hi));
  }
}

using MicroKernel = void (*)(size_t, const float*, size_t, const float*, const float*, float*, size_t, __mmask16,
                             __mmask16, float, float);
constexpr MicroKernel kKernels[kRows + 1] = {nullptr,         micro_kernel<1>, micro_kernel<2>,
                                             micro_kernel<3>, micro_kernel<4>, micro_kernel<5>,
                                             micro_kernel<6>, micro_kernel<7>, micro_kernel<8>};

__mmask16 mask_of(size_t columns) {  // the low `columns` (0..16) lanes
  return columns >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << columns) - 1);
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void packed_gemm(const PackedWeights& w, size_t m, const float* a, size_t lda, float* c, size_t ldc, float low,
                 float high, pthreadpool_t pool) {
#if defined(__x86_64__)
  const size_t panels = (w.n + kPanel - 1) / kPanel, row_blocks = (m + kRows - 1) / kRows;
  // Units are (panel, row block) pairs, panel-major: a chunk of them reuses few panels.
  parallel_chunks(pool, panels * row_blocks, 4, [&](size_t begin, size_t end) {
    for (size_t unit = begin; unit < end; ++unit) {
      const size_t panel = unit / row_blocks, r0 = (unit % row_blocks) * kRows;
      const size_t j0 = panel * kPanel, columns = std::min(kPanel, w.n - j0);
      const size_t rows = std::min(kRows, m - r0);
      kKernels[rows](w.k, a + r0 * lda, lda, w.panels + panel * w.k * kPanel, w.bias + j0, c + r0 * ldc + j0, ldc,
                     mask_of(columns), mask_of(columns > 16 ? columns - 16 : 0), low, high);
    }
  });
#else
  (void)w, (void)m, (void)a, (void)lda, (void)c, (void)ldc, (void)low, (void)high, (void)pool;
  fail(ExitCode::failure, "internal: packed_gemm needs AVX-512F");
#endif
}

}  // namespace mt::cpu
