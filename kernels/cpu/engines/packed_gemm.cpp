// The packed GEMM and convolution of packed_gemm.h. The micro-kernel computes 8 (or fewer, at the
// bottom edge) rows by one 32-column panel over the whole k: per step it loads the panel's 32
// weights once and broadcasts one value of each row, 16 FMAs for 10 loads. A convolution is the
// same GEMM whose rows are gathered tap by tap from the NHWC input (an "indirect" GEMM: no im2col
// copy), padding read from a row of zeros. Work is ordered by groups of panels so that the
// weights being used stay in cache while every row block passes over them.
#include "kernels/cpu/engines/packed_gemm.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/engines/epilogue_avx512.h"
#include "kernels/cpu/engines/avx512_lanes.h"
#endif

#include "kernels/cpu/engines/cpu_features.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kPanel = 32;         // columns per panel
constexpr size_t kRows = 8;           // rows per micro-kernel call
constexpr size_t kMaxTaps = 64;       // kernel taps of packed_conv (7x7 and smaller; 4 KB of row pointers)
constexpr size_t kMaxGathered = 512;  // floats of a gathered row (taps x channels under 16 channels)

bool packed_gemm_supported() { return cpu_has_avx512f(); }

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
  return packed_gemm_view(memory, k, n);
}

PackedWeights packed_gemm_view(const void* memory, size_t k, size_t n) {
  const auto* p = static_cast<const float*>(memory);
  return PackedWeights{.panels = p, .bias = p + (n + kPanel - 1) / kPanel * k * kPanel, .k = k, .n = n};
}

PackedWeights scale_gemm_rows(const PackedWeights& w, const float* scale, void* memory) {
  const size_t panels = (w.n + kPanel - 1) / kPanel;
  auto* out = static_cast<float*>(memory);
  for (size_t panel = 0; panel < panels; ++panel)
    for (size_t i = 0; i < w.k; ++i) {
      const float* from = w.panels + (panel * w.k + i) * kPanel;
      float* to = out + (panel * w.k + i) * kPanel;
      for (size_t j = 0; j < kPanel; ++j) to[j] = from[j] * scale[i];
    }
  return PackedWeights{.panels = out, .bias = w.bias, .k = w.k, .n = w.n};
}

ConvWindow window_of(const PackedConvShape& s, size_t p) {
  const size_t pixels = s.out_h * s.out_w, oy = p % pixels / s.out_w, ox = p % s.out_w;
  return ConvWindow{.n = p / pixels,
                    .top = static_cast<int64_t>(oy * s.stride_h) - s.pad_top,
                    .left = static_cast<int64_t>(ox * s.stride_w) - s.pad_left};
}

#if defined(__x86_64__)
// GCC 12 warns that AVX-512 intrinsics use an uninitialised value: their unused pass-through
// operand is _mm512_undefined_ps(), on purpose (epilogue_avx512.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

// Rows [0, R) of C's columns [0, 32) (stores masked by mask0/mask1) from one panel; Narrow: columns
// [0, 16) only (a last panel of 16 columns or fewer: half the FMAs). The k values a row multiplies
// come in `taps` runs of `k` floats: row r's run t starts at rows[t * kRows + r] and multiplies the
// panel's block of k rows tap[t] (one run of the whole k for a GEMM; one per kernel tap, an input
// pixel's channels, for a conv, where taps in the padding of every row are left out). The output
// stage is epilogue.h's, with the residual at `residual` (C's layout) when Residual.
template <size_t R, bool Narrow, Activation A, bool Residual>
__attribute__((target("avx512f"))) void micro_kernel(size_t taps, const uint8_t* tap, size_t k,
                                                     const float* const* rows, const float* panel, const float* bias,
                                                     float* c, size_t ldc, const float* residual, __mmask16 mask0,
                                                     __mmask16 mask1, const Epilogue& epilogue) {
  __m512 acc0[R], acc1[R];
  const __m512 bias0 = _mm512_loadu_ps(bias), bias1 = Narrow ? _mm512_setzero_ps() : _mm512_loadu_ps(bias + 16);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
  }
  for (size_t t = 0; t < taps; ++t, rows += kRows) {
    const float* row[R];
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) row[r] = rows[r];
    const float* w = panel + size_t{tap[t]} * k * kPanel;
    for (size_t i = 0; i < k; ++i) {
      const __m512 b0 = _mm512_loadu_ps(w), b1 = Narrow ? b0 : _mm512_loadu_ps(w + 16);
      w += kPanel;
#pragma GCC unroll 8
      for (size_t r = 0; r < R; ++r) {
        const __m512 x = _mm512_set1_ps(row[r][i]);
        acc0[r] = _mm512_fmadd_ps(x, b0, acc0[r]);
        if constexpr (!Narrow) acc1[r] = _mm512_fmadd_ps(x, b1, acc1[r]);
      }
    }
  }
  const avx512::EpilogueBounds bounds = avx512::bounds_of(epilogue);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) {
    const float* res = Residual ? residual + r * ldc : nullptr;
    _mm512_mask_storeu_ps(c + r * ldc, mask0, avx512::finish<A, Residual>(acc0[r], bounds, res, mask0));
    if constexpr (!Narrow)
      _mm512_mask_storeu_ps(c + r * ldc + 16, mask1,
                            avx512::finish<A, Residual>(acc1[r], bounds, Residual ? res + 16 : nullptr, mask1));
  }
}

using MicroKernel = void (*)(size_t, const uint8_t*, size_t, const float* const*, const float*, const float*, float*,
                             size_t, const float*, __mmask16, __mmask16, const Epilogue&);

// The micro-kernels of one output stage, by panel width (wide, narrow) and row count.
struct KernelSet {
  MicroKernel kernels[2][kRows + 1];
};

template <bool Narrow, Activation A, bool Residual>
constexpr MicroKernel kernel_of(size_t rows) {
  switch (rows) {
    case 1: return micro_kernel<1, Narrow, A, Residual>;
    case 2: return micro_kernel<2, Narrow, A, Residual>;
    case 3: return micro_kernel<3, Narrow, A, Residual>;
    case 4: return micro_kernel<4, Narrow, A, Residual>;
    case 5: return micro_kernel<5, Narrow, A, Residual>;
    case 6: return micro_kernel<6, Narrow, A, Residual>;
    case 7: return micro_kernel<7, Narrow, A, Residual>;
    case 8: return micro_kernel<8, Narrow, A, Residual>;
    default: return nullptr;
  }
}

template <Activation A, bool Residual>
constexpr KernelSet kernel_set() {
  KernelSet set{};
  for (size_t r = 1; r <= kRows; ++r) {
    set.kernels[0][r] = kernel_of<false, A, Residual>(r);
    set.kernels[1][r] = kernel_of<true, A, Residual>(r);
  }
  return set;
}

constexpr KernelSet kKernelSets[3][2] = {
    {kernel_set<Activation::none, false>(), kernel_set<Activation::none, true>()},
    {kernel_set<Activation::hardswish, false>(), kernel_set<Activation::hardswish, true>()},
    {kernel_set<Activation::silu, false>(), kernel_set<Activation::silu, true>()},
};

const KernelSet& kernels_for(const Epilogue& e) {
  return kKernelSets[static_cast<size_t>(e.activation)][e.residual != nullptr ? 1 : 0];
}

// Panels per group: a group's weights (at most kGroupBytes, at least one panel) stay in cache
// while every block of rows passes over them.
constexpr size_t kGroupBytes = size_t{256} << 10;

// C = epilogue(A B + bias) over m rows, A's rows given by fill(r0, count, rows, scratch, tap), which
// points rows[t * kRows + r] at row r0 + r's run of tap t (k / taps floats), in place or copied
// into scratch (kRows * kMaxGathered floats), names the weights' tap of each run in tap[t] and
// returns the number of runs (at most `taps`). Work units are (panel group, row block) pairs,
// group-major, so that a chunk of them shares few groups; each unit fills its rows once for all
// panels of its group.
template <typename Fill>
void run_blocks(const PackedWeights& w, size_t m, size_t taps, const Fill& fill, float* c, size_t ldc,
                const Epilogue& epilogue, ThreadPool* pool) {
  // Rows split evenly into blocks of at most kRows: 49 rows are 7 blocks of 7, not 6 of 8 and 1.
  const size_t row_blocks = (m + kRows - 1) / kRows;
  const size_t block = row_blocks == 0 ? kRows : (m + row_blocks - 1) / row_blocks;
  const size_t panels = (w.n + kPanel - 1) / kPanel;
  // With few row blocks (a squeeze-excitation's 1x1 conv of one pixel) the panels are the work to
  // share: one panel per unit, and units split between threads from 2 on.
  const bool few_rows = row_blocks < 4;
  const size_t group = few_rows ? 1 : std::max<size_t>(1, kGroupBytes / (w.k * kPanel * sizeof(float)));
  const size_t groups = (panels + group - 1) / group;
  const KernelSet& kernels = kernels_for(epilogue);
  parallel_chunks(pool, groups * row_blocks, few_rows ? 1 : 4, [&](size_t begin, size_t end) {
    const float* rows[kMaxTaps * kRows];
    uint8_t tap[kMaxTaps];
    alignas(64) float scratch[kRows * kMaxGathered];
    for (size_t unit = begin; unit < end; ++unit) {
      const size_t first = unit / row_blocks * group, r0 = unit % row_blocks * block;
      if (r0 >= m) continue;  // even blocks can leave the last one empty
      const size_t count = std::min(block, m - r0);
      const size_t runs = fill(r0, count, rows, scratch, tap);
      for (size_t panel = first; panel < std::min(panels, first + group); ++panel) {
        const size_t j0 = panel * kPanel, columns = std::min(kPanel, w.n - j0);
        const float* residual = epilogue.residual != nullptr ? epilogue.residual + r0 * ldc + j0 : nullptr;
        kernels.kernels[columns <= 16 ? 1 : 0][count](runs, tap, w.k / taps, rows, w.panels + panel * w.k * kPanel,
                                                      w.bias + j0, c + r0 * ldc + j0, ldc, residual, low_lanes(columns),
                                                      low_lanes(columns > 16 ? columns - 16 : 0), epilogue);
      }
    }
  });
}

// Input pixel (iy, ix) of image n; both coordinates inside.
const float* pixel_at(const PackedConvShape& s, const float* x, size_t n, int64_t iy, int64_t ix) {
  return x + ((n * s.h + static_cast<size_t>(iy)) * s.w + static_cast<size_t>(ix)) * s.channels;
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void packed_gemm(const PackedWeights& w, size_t m, const float* a, size_t lda, float* c, size_t ldc,
                 const Epilogue& epilogue, ThreadPool* pool) {
#if defined(__x86_64__)
  auto fill = [a, lda](size_t r0, size_t count, const float** rows, float*, uint8_t* tap) {
    for (size_t r = 0; r < count; ++r) rows[r] = a + (r0 + r) * lda;
    tap[0] = 0;
    return size_t{1};
  };
  run_blocks(w, m, 1, fill, c, ldc, epilogue, pool);
#else
  (void)w, (void)m, (void)a, (void)lda, (void)c, (void)ldc, (void)epilogue, (void)pool;
  fail(ExitCode::failure, "internal: packed_gemm needs AVX-512F");
#endif
}

void packed_gemm(const PackedWeights& w, size_t m, const float* a, size_t lda, float* c, size_t ldc, float low,
                 float high, ThreadPool* pool) {
  packed_gemm(w, m, a, lda, c, ldc, Epilogue{.low = low, .high = high}, pool);
}

// Under 16 channels per tap the micro-kernel would reload its row pointers every few steps (a
// ResNet stem, 3 channels and 7x7, ran 1.4x slower than XNNPACK's): such convs copy each row
// block's taps into one contiguous row per pixel instead (an im2col of 8 rows at a time, in
// cache). That pays from 128 weights per output channel (the stem's 147: 1.77-1.92 -> 1.51 ms),
// not for the 27 of a 3x3 stem (MobileNetV2's: 0.21 -> 0.33 ms), which XNNPACK keeps.
bool packed_conv_fits(size_t kernel_h, size_t kernel_w, size_t channels) {
  const size_t taps = kernel_h * kernel_w;
  if (channels >= 16) return taps <= kMaxTaps;
  return taps * channels >= 128 && taps * channels <= kMaxGathered;
}

void packed_conv(const PackedWeights& w, const PackedConvShape& s, const float* x, const float* zeros, float* y,
                 const Epilogue& epilogue, ThreadPool* pool) {
#if defined(__x86_64__)
  const size_t taps = s.kernel_h * s.kernel_w, m = s.n * s.out_h * s.out_w, c = s.channels;
  if (c < 16) {  // gathered: one contiguous row of taps * c floats per pixel
    auto gather = [&s, x, taps, c](size_t r0, size_t count, const float** rows, float* scratch, uint8_t* tap) {
      const size_t span = s.kernel_w * c;  // floats per kernel row
      for (size_t r = 0; r < count; ++r) {
        const ConvWindow win = window_of(s, r0 + r);
        // The kernel row's pixels adjacent and all inside: one copy per kernel row.
        const bool whole = s.dilation_w == 1 && win.left >= 0 &&
                           win.left + static_cast<int64_t>(s.kernel_w) <= static_cast<int64_t>(s.w);
        float* row = scratch + r * taps * c;
        for (size_t ky = 0; ky < s.kernel_h; ++ky) {
          float* dst = row + ky * span;
          const int64_t iy = win.top + static_cast<int64_t>(ky * s.dilation_h);
          if (!inside(iy, s.h)) {
            std::fill_n(dst, span, 0.0f);
          } else if (whole) {
            std::copy_n(pixel_at(s, x, win.n, iy, win.left), span, dst);
          } else {
            for (size_t kx = 0; kx < s.kernel_w; ++kx) {
              const int64_t ix = win.left + static_cast<int64_t>(kx * s.dilation_w);
              if (inside(ix, s.w)) std::copy_n(pixel_at(s, x, win.n, iy, ix), c, dst + kx * c);
              else std::fill_n(dst + kx * c, c, 0.0f);
            }
          }
        }
        rows[r] = row;
      }
      tap[0] = 0;
      return size_t{1};
    };
    return run_blocks(w, m, 1, gather, y, w.n, epilogue, pool);
  }
  // Each tap's run of every row of the block, then the taps no row reads inside the input left
  // out (their rows all point at `zeros`): a dilation-36 3x3 conv on a 33x33 map reads only its
  // centre tap.
  auto fill = [&s, x, zeros](size_t r0, size_t count, const float** rows, float*, uint8_t* tap) {
    ConvWindow windows[kRows];
    for (size_t r = 0; r < count; ++r) windows[r] = window_of(s, r0 + r);
    size_t runs = 0;
    for (size_t ky = 0, t = 0; ky < s.kernel_h; ++ky) {
      for (size_t kx = 0; kx < s.kernel_w; ++kx, ++t) {
        bool any = false;
        for (size_t r = 0; r < count; ++r) {
          const ConvWindow& win = windows[r];
          const int64_t iy = win.top + static_cast<int64_t>(ky * s.dilation_h);
          const int64_t ix = win.left + static_cast<int64_t>(kx * s.dilation_w);
          const bool in = inside(iy, s.h) && inside(ix, s.w);
          rows[runs * kRows + r] = in ? pixel_at(s, x, win.n, iy, ix) : zeros;
          any = any || in;
        }
        if (any) tap[runs++] = static_cast<uint8_t>(t);
      }
    }
    return runs;
  };
  run_blocks(w, m, taps, fill, y, w.n, epilogue, pool);
#else
  (void)w, (void)s, (void)x, (void)zeros, (void)y, (void)epilogue, (void)pool;
  fail(ExitCode::failure, "internal: packed_conv needs AVX-512F");
#endif
}

void packed_conv(const PackedWeights& w, const PackedConvShape& s, const float* x, const float* zeros, float* y,
                 float low, float high, ThreadPool* pool) {
  packed_conv(w, s, x, zeros, y, Epilogue{.low = low, .high = high}, pool);
}

}  // namespace mt::cpu
