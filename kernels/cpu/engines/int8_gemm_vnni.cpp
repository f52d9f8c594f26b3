// The u8 x s8 GEMM of int8_vnni.h. The micro-kernel computes up to 8 rows by one 32-column panel:
// per step of 4 k values it loads the panel's 32x4 weights (two registers) once and, per row,
// broadcasts 4 input bytes into two vpdpbusd, 64 multiply-adds each. The input was flipped to
// unsigned once per layer (int8_flip): flipping each broadcast instead (one vpxord) cost 20% of
// the kernel's throughput on ResNet18's 3x3 shapes (CPU time, 400 -> 490 GOPS without it). A convolution is the same GEMM whose rows are gathered tap by
// tap from the NHWC input (an indirect GEMM: no im2col copy), as packed_gemm.cpp does for fp32.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kPanel = 32;    // columns per panel
constexpr size_t kRows = 8;      // rows per micro-kernel call
constexpr size_t kMaxTaps = 64;       // kernel taps of int8_conv (7x7 and smaller)
constexpr size_t kMaxGathered = 512;  // bytes of a gathered row (taps x channels under 16 channels)

bool int8_vnni_supported() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
                                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi");
  return supported;
#else
  return false;
#endif
}

namespace {
size_t round4(size_t v) { return (v + 3) / 4 * 4; }
size_t panels_of(size_t n) { return (n + kPanel - 1) / kPanel; }
}  // namespace

size_t int8_gemm_bytes(size_t taps, size_t channels, size_t n) {
  const size_t columns = panels_of(n) * kPanel;
  return columns * taps * round4(channels) + columns * (sizeof(int32_t) + sizeof(float));
}

PackedInt8Gemm pack_int8_gemm(void* memory, const int8_t* w, const int32_t* bias, const float* multipliers,
                              size_t taps, size_t channels, size_t n, int32_t x_zero, Int8Output out) {
  const size_t k = taps * round4(channels), columns = panels_of(n) * kPanel;
  std::memset(memory, 0, int8_gemm_bytes(taps, channels, n));
  auto* panels = static_cast<int8_t*>(memory);
  auto* packed_bias = reinterpret_cast<int32_t*>(panels + columns * k);
  auto* packed_multipliers = reinterpret_cast<float*>(packed_bias + columns);
  for (size_t j = 0; j < n; ++j) {
    int8_t* panel = panels + (j / kPanel) * k * kPanel;
    int64_t sum = 0;
    for (size_t t = 0; t < taps; ++t)
      for (size_t i = 0; i < channels; ++i) {
        const int8_t v = w[(j * taps + t) * channels + i];
        const size_t kk = t * round4(channels) + i;  // k index: [k / 4][column][k % 4]
        panel[(kk / 4 * kPanel + j % kPanel) * 4 + kk % 4] = v;
        sum += v;
      }
    // Modulo 2^32, as the kernel's int32 sums wrap: the result is exact wherever the reference's is.
    const int64_t folded = (bias != nullptr ? bias[j] : 0) - (128 + int64_t{x_zero}) * sum;
    packed_bias[j] = static_cast<int32_t>(static_cast<uint32_t>(folded));
    packed_multipliers[j] = multipliers[j];
  }
  return int8_gemm_view(memory, taps, channels, n, out);
}

PackedInt8Gemm int8_gemm_view(const void* memory, size_t taps, size_t channels, size_t n, Int8Output out) {
  const size_t k = taps * round4(channels), columns = panels_of(n) * kPanel;
  const auto* panels = static_cast<const int8_t*>(memory);
  const auto* bias = reinterpret_cast<const int32_t*>(panels + columns * k);
  return PackedInt8Gemm{.panels = panels,
                        .bias = bias,
                        .multipliers = reinterpret_cast<const float*>(bias + columns),
                        .taps = taps,
                        .k = k,
                        .n = n,
                        .out = out};
}

bool int8_conv_fits(size_t kernel_h, size_t kernel_w) { return kernel_h * kernel_w <= kMaxTaps; }

bool int8_conv_gathers(size_t kernel_h, size_t kernel_w, size_t channels) {
  const size_t taps = kernel_h * kernel_w;
  return taps > 1 && channels < 16 && (taps * channels + 3) / 4 * 4 <= kMaxGathered;
}

#if defined(__x86_64__)
// GCC 12 warns that _mm512_min_ps/_mm512_max_ps use an uninitialised value: their unused
// pass-through operand is _mm512_undefined_ps(), on purpose.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

// Rows [0, R) of C's columns [0, 32) (stores masked by mask0/mask1) from one panel. Row r's k
// values come in `taps` runs of `steps` * 4 bytes, run t starting at rows[t * kRows + r]. With Add,
// C is residual.add of the GEMM's result and residual.r (pointing at C's first element here).
template <size_t R, bool Add>
MT_VNNI_TARGET void micro_kernel(size_t taps, size_t steps, const uint8_t* const* rows, const int8_t* panel,
                                 const int32_t* bias, const float* multipliers, const Int8Output& out, int8_t* c,
                                 size_t ldc, __mmask16 mask0, __mmask16 mask1, Int8Residual residual) {
  __m512i acc0[R], acc1[R];
  const __m512i bias0 = _mm512_loadu_si512(bias), bias1 = _mm512_loadu_si512(bias + 16);
#pragma GCC unroll 8
  for (size_t r = 0; r < R; ++r) {
    acc0[r] = bias0;
    acc1[r] = bias1;
  }
  for (size_t t = 0; t < taps; ++t, rows += kRows) {
    const uint8_t* row[R];
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) row[r] = rows[r];
    for (size_t i = 0; i < steps; ++i) {
      const __m512i b0 = _mm512_loadu_si512(panel), b1 = _mm512_loadu_si512(panel + 64);
      panel += 4 * kPanel;
#pragma GCC unroll 8
      for (size_t r = 0; r < R; ++r) {
        int32_t four;
        std::memcpy(&four, row[r] + 4 * i, sizeof(four));
        const __m512i x = _mm512_set1_epi32(four);
        // acc += x (u8) . b (s8): vpdpbusd written out, because with the intrinsic GCC 12 copied
        // the 16 accumulators between registers every step (346 vmovdqa in this file, spills
        // too; 122 and none so): +17-30% on ResNet18's and MobileNetV2's shapes (CPU time).
        asm("vpdpbusd %2, %1, %0" : "+v"(acc0[r]) : "v"(x), "v"(b0));
        asm("vpdpbusd %2, %1, %0" : "+v"(acc1[r]) : "v"(x), "v"(b1));
      }
    }
  }
  const vnni::OutputVectors o = vnni::output_vectors(out);
  const __m512 m0 = _mm512_loadu_ps(multipliers), m1 = _mm512_loadu_ps(multipliers + 16);
  if constexpr (Add) {
    const vnni::AddVectors a = vnni::add_vectors(*residual.add);
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) {
      vnni::requantize_add_store(c + r * ldc, residual.r + r * ldc, mask0, acc0[r], m0, o, a);
      vnni::requantize_add_store(c + r * ldc + 16, residual.r + r * ldc + 16, mask1, acc1[r], m1, o, a);
    }
  } else {
    (void)residual;
#pragma GCC unroll 8
    for (size_t r = 0; r < R; ++r) {
      vnni::requantize_store(c + r * ldc, mask0, acc0[r], m0, o);
      vnni::requantize_store(c + r * ldc + 16, mask1, acc1[r], m1, o);
    }
  }
}

using MicroKernel = void (*)(size_t, size_t, const uint8_t* const*, const int8_t*, const int32_t*, const float*,
                             const Int8Output&, int8_t*, size_t, __mmask16, __mmask16, Int8Residual);
// [with a fused add][rows]
constexpr MicroKernel kKernels[2][kRows + 1] = {
    {nullptr, micro_kernel<1, false>, micro_kernel<2, false>, micro_kernel<3, false>, micro_kernel<4, false>,
     micro_kernel<5, false>, micro_kernel<6, false>, micro_kernel<7, false>, micro_kernel<8, false>},
    {nullptr, micro_kernel<1, true>, micro_kernel<2, true>, micro_kernel<3, true>, micro_kernel<4, true>,
     micro_kernel<5, true>, micro_kernel<6, true>, micro_kernel<7, true>, micro_kernel<8, true>}};

// Panels per group: a group's weights (at most kGroupBytes, at least one panel) stay in cache
// while every block of rows passes over them.
constexpr size_t kGroupBytes = size_t{128} << 10;

// C = requantize(A B + bias) over m rows, A's rows given by fill(r0, count, rows, scratch), which
// points rows[t * kRows + r] at row r0 + r's run of tap t, in place or copied into scratch (kRows
// rows of kMaxGathered bytes). Work units are (panel group, row block) pairs,
// group-major, as packed_gemm.cpp's run_blocks.
template <typename Fill>
void run_blocks(const PackedInt8Gemm& w, size_t m, const Fill& fill, int8_t* c, size_t ldc, pthreadpool_t pool,
                Int8Residual residual) {
  const MicroKernel* kernels = kKernels[residual.add != nullptr ? 1 : 0];
  const size_t row_blocks = (m + kRows - 1) / kRows;
  const size_t block = row_blocks == 0 ? kRows : (m + row_blocks - 1) / row_blocks;
  const size_t panels = panels_of(w.n);
  const size_t group = std::max<size_t>(1, kGroupBytes / std::max<size_t>(1, w.k * kPanel));
  const size_t groups = (panels + group - 1) / group;
  const size_t steps = w.k / w.taps / 4;
  parallel_chunks(pool, groups * row_blocks, 4, [&](size_t begin, size_t end) {
    const uint8_t* rows[kMaxTaps * kRows];
    alignas(64) uint8_t scratch[kRows * kMaxGathered];
    for (size_t unit = begin; unit < end; ++unit) {
      const size_t first = unit / row_blocks * group, r0 = unit % row_blocks * block;
      if (r0 >= m) continue;  // even blocks can leave the last one empty
      const size_t count = std::min(block, m - r0);
      fill(r0, count, rows, scratch);
      for (size_t panel = first; panel < std::min(panels, first + group); ++panel) {
        const size_t j0 = panel * kPanel, columns = std::min(kPanel, w.n - j0);
        const Int8Residual here{residual.add, residual.add != nullptr ? residual.r + r0 * ldc + j0 : nullptr};
        kernels[count](w.taps, steps, rows, w.panels + panel * w.k * kPanel, w.bias + j0, w.multipliers + j0, w.out,
                       c + r0 * ldc + j0, ldc, vnni::lanes(columns), vnni::lanes(columns > 16 ? columns - 16 : 0), here);
      }
    }
  });
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void int8_flip(const int8_t* x, uint8_t* u, size_t n, pthreadpool_t pool) {
  parallel_chunks(pool, n, 65536, [x, u](size_t begin, size_t end) {
    const int8_t* src = x;  // locals: GCC vectorizes the loop only when a store cannot change them
    uint8_t* dst = u;
    for (size_t i = begin; i < end; ++i) dst[i] = static_cast<uint8_t>(src[i] ^ 0x80);
  });
}

void int8_gemm(const PackedInt8Gemm& w, size_t m, const uint8_t* a, size_t lda, int8_t* c, size_t ldc,
               pthreadpool_t pool, Int8Residual residual) {
#if defined(__x86_64__)
  auto fill = [a, lda](size_t r0, size_t count, const uint8_t** rows, uint8_t*) {
    for (size_t r = 0; r < count; ++r) rows[r] = a + (r0 + r) * lda;
  };
  run_blocks(w, m, fill, c, ldc, pool, residual);
#else
  (void)w, (void)m, (void)a, (void)lda, (void)c, (void)ldc, (void)pool, (void)residual;
  fail(ExitCode::failure, "internal: int8_gemm needs AVX512-VNNI");
#endif
}

void int8_conv(const PackedInt8Gemm& w, const PackedConvShape& s, const uint8_t* x, const uint8_t* padding, int8_t* y,
               pthreadpool_t pool, Int8Residual residual) {
#if defined(__x86_64__)
  auto pixel = [&s, x](size_t n, int64_t iy, int64_t ix) {
    return x + ((n * s.h + static_cast<size_t>(iy)) * s.w + static_cast<size_t>(ix)) * s.channels;
  };
  if (w.taps == 1 && s.kernel_h * s.kernel_w > 1) {  // gathered: one contiguous row of taps x channels per pixel
    auto gather = [&s, &pixel, padding](size_t r0, size_t count, const uint8_t** rows, uint8_t* scratch) {
      const size_t c = s.channels, span = s.kernel_w * c;  // bytes per kernel row
      for (size_t r = 0; r < count; ++r) {
        const ConvWindow win = window_of(s, r0 + r);
        // The kernel row's pixels adjacent and all inside: one copy per kernel row.
        const bool whole = s.dilation_w == 1 && win.left >= 0 &&
                           win.left + static_cast<int64_t>(s.kernel_w) <= static_cast<int64_t>(s.w);
        uint8_t* row = scratch + r * kMaxGathered;
        for (size_t ky = 0; ky < s.kernel_h; ++ky) {
          uint8_t* dst = row + ky * span;
          const int64_t iy = win.top + static_cast<int64_t>(ky * s.dilation_h);
          if (inside(iy, s.h) && whole) {
            std::memcpy(dst, pixel(win.n, iy, win.left), span);
            continue;
          }
          for (size_t kx = 0; kx < s.kernel_w; ++kx) {
            const int64_t ix = win.left + static_cast<int64_t>(kx * s.dilation_w);
            std::memcpy(dst + kx * c, inside(iy, s.h) && inside(ix, s.w) ? pixel(win.n, iy, ix) : padding, c);
          }
        }
        std::memset(row + s.kernel_h * span, 0, 3);  // the last 4-byte step's tail (zero weights)
        rows[r] = row;
      }
    };
    return run_blocks(w, s.n * s.out_h * s.out_w, gather, y, w.n, pool, residual);
  }
  auto fill = [&s, &pixel, padding](size_t r0, size_t count, const uint8_t** rows, uint8_t*) {
    for (size_t r = 0; r < count; ++r) {
      const ConvWindow win = window_of(s, r0 + r);
      for (size_t ky = 0, t = 0; ky < s.kernel_h; ++ky) {
        const int64_t iy = win.top + static_cast<int64_t>(ky * s.dilation_h);
        for (size_t kx = 0; kx < s.kernel_w; ++kx, ++t) {
          const int64_t ix = win.left + static_cast<int64_t>(kx * s.dilation_w);
          rows[t * kRows + r] = inside(iy, s.h) && inside(ix, s.w) ? pixel(win.n, iy, ix) : padding;
        }
      }
    }
  };
  run_blocks(w, s.n * s.out_h * s.out_w, fill, y, w.n, pool, residual);
#else
  (void)w, (void)s, (void)x, (void)padding, (void)y, (void)pool, (void)residual;
  fail(ExitCode::failure, "internal: int8_conv needs AVX512-VNNI");
#endif
}

}  // namespace mt::cpu
