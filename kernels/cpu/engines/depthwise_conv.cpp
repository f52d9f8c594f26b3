// The depthwise convolution of depthwise_conv.h. Work goes output row by output row; within a row,
// channel block by channel block (16 channels, one vector), so that the block's K x K weight
// vectors stay in registers while every output pixel of the row is computed, R pixels at a time
// (R independent sums hide the FMA latency): each tap is one FMA whose memory operand is the input
// pixel's 16 channels. Taps that fall into the padding are skipped by masked loads (zeros) in the
// pixels of a row that have any, and in rows that have one in the padding; the other pixels (all
// of them in a layer's interior) take no mask and no bounds check.
#include "kernels/cpu/engines/depthwise_conv.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/engines/epilogue_avx512.h"
#endif

#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kLanes = 16;  // channels per vector
constexpr size_t kMaxKernel = 5;

namespace {
size_t blocks_of(size_t channels) { return (channels + kLanes - 1) / kLanes; }
// Floats of one channel block: its taps' weight vectors, then its bias vector.
size_t block_floats(size_t taps) { return (taps + 1) * kLanes; }
}  // namespace

bool depthwise_supported() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported;
#else
  return false;
#endif
}

bool depthwise_fits(size_t kernel_h, size_t kernel_w) {
  return kernel_h == kernel_w && (kernel_h == 3 || kernel_h == 5);
}

size_t depthwise_bytes(size_t kernel_h, size_t kernel_w, size_t channels) {
  return blocks_of(channels) * block_floats(kernel_h * kernel_w) * sizeof(float);
}

PackedDepthwise pack_depthwise_weights(void* memory, const float* w, const float* bias, size_t kernel_h,
                                       size_t kernel_w, size_t channels) {
  const size_t taps = kernel_h * kernel_w;
  auto* p = static_cast<float*>(memory);
  std::memset(p, 0, depthwise_bytes(kernel_h, kernel_w, channels));
  for (size_t c = 0; c < channels; ++c) {
    float* block = p + c / kLanes * block_floats(taps);
    for (size_t t = 0; t < taps; ++t) block[t * kLanes + c % kLanes] = w[c * taps + t];
    if (bias != nullptr) block[taps * kLanes + c % kLanes] = bias[c];
  }
  return PackedDepthwise{.data = p, .channels = channels, .kernel_h = kernel_h, .kernel_w = kernel_w};
}

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"  // AVX-512 intrinsics' pass-through operands (epilogue_avx512.h)
#if !defined(__clang__)                           // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

using avx512::EpilogueBounds;

// One conv's run: its operands and the output columns whose taps are all inside the input.
struct Job {
  const PackedDepthwise* w;
  const PackedConvShape* s;
  const float* x;
  float* y;
  const Epilogue* e;
  size_t inner_begin, inner_end;  // output columns [begin, end): every tap's column inside
};

// One output row of one channel block: the input rows its K kernel rows read (clamped into the
// image, row_ok bit ky set where inside), offset to the block's channels.
template <size_t K>
struct RowInputs {
  const float* rows[K];
  unsigned row_ok;
};

// The output stage of R pixels' sums, stored at y + at[j] * c.
template <size_t R, Activation A, bool Residual>
__attribute__((target("avx512f"), always_inline)) inline void store(const __m512 (&acc)[R], const size_t (&at)[R],
                                                                    size_t c, float* y, const float* residual,
                                                                    __mmask16 lanes, const EpilogueBounds& bounds) {
#pragma GCC unroll 8
  for (size_t j = 0; j < R; ++j) {
    const size_t offset = at[j] * c;
    _mm512_mask_storeu_ps(y + offset, lanes,
                          avx512::finish<A, Residual>(acc[j], bounds, Residual ? residual + offset : nullptr, lanes));
  }
}

// Output pixels ox .. ox + R - 1 of the row, all of whose taps are inside the input, with `wt` the
// block's weight vectors: each tap one FMA with the input as its memory operand, the addresses
// stepped by adding the stride and the dilation (in floats).
template <size_t K, size_t R, Activation A, bool Residual>
__attribute__((target("avx512f"), always_inline)) inline void inner_pixels(const __m512 (&wt)[K * K], __m512 bias,
                                                                           const RowInputs<K>& in,
                                                                           const PackedConvShape& s, size_t ox,
                                                                           float* y, const float* residual,
                                                                           const EpilogueBounds& bounds) {
  const size_t c = s.channels, pixel_step = s.stride_w * c, tap_step = s.dilation_w * c;
  const size_t left = ox * s.stride_w - static_cast<size_t>(s.pad_left);  // inside: not negative
  __m512 acc[R];
  size_t at[R];
#pragma GCC unroll 8
  for (size_t j = 0; j < R; ++j) {
    acc[j] = bias;
    at[j] = ox + j;
  }
#pragma GCC unroll 5
  for (size_t ky = 0; ky < K; ++ky) {
    const float* tap = in.rows[ky] + left * c;
#pragma GCC unroll 5
    for (size_t kx = 0; kx < K; ++kx, tap += tap_step) {
      const float* p = tap;
#pragma GCC unroll 8
      for (size_t j = 0; j < R; ++j, p += pixel_step)
        acc[j] = _mm512_fmadd_ps(wt[ky * K + kx], _mm512_loadu_ps(p), acc[j]);
    }
  }
  store<R, A, Residual>(acc, at, c, y, residual, __mmask16(0xFFFF), bounds);
}

// Output pixels ox .. ox + R - 1 of the row (those past `last` recompute `last`: stored twice, the
// same value), any of whose taps may be outside the input: kernel rows outside are skipped, taps
// outside a row are loaded under an empty mask (zeros), from a column clamped inside.
template <size_t K, size_t R, Activation A, bool Residual>
__attribute__((target("avx512f"), always_inline)) inline void edge_pixels(
    const __m512 (&wt)[K * K], __m512 bias, const RowInputs<K>& in, const PackedConvShape& s, size_t ox, size_t last,
    float* y, const float* residual, __mmask16 lanes, const EpilogueBounds& bounds) {
  const size_t c = s.channels;
  const int64_t width = static_cast<int64_t>(s.w);
  __m512 acc[R];
  size_t at[R];
  size_t offset[R][K];   // the tap's input column (clamped inside) times c
  __mmask16 mask[R][K];  // lanes, or none for a tap outside
#pragma GCC unroll 8
  for (size_t j = 0; j < R; ++j) {
    acc[j] = bias;
    at[j] = std::min(ox + j, last);
    const int64_t left = static_cast<int64_t>(at[j] * s.stride_w) - s.pad_left;
#pragma GCC unroll 5
    for (size_t kx = 0; kx < K; ++kx) {
      const int64_t ix = left + static_cast<int64_t>(kx * s.dilation_w);
      const bool ok = ix >= 0 && ix < width;
      offset[j][kx] = ok ? static_cast<size_t>(ix) * c : 0;
      mask[j][kx] = ok ? lanes : __mmask16(0);
    }
  }
  for (size_t ky = 0; ky < K; ++ky) {
    if ((in.row_ok >> ky & 1u) == 0) continue;
    const float* row = in.rows[ky];
#pragma GCC unroll 5
    for (size_t kx = 0; kx < K; ++kx) {
#pragma GCC unroll 8
      for (size_t j = 0; j < R; ++j)
        acc[j] = _mm512_fmadd_ps(wt[ky * K + kx], _mm512_maskz_loadu_ps(mask[j][kx], row + offset[j][kx]), acc[j]);
    }
  }
  store<R, A, Residual>(acc, at, c, y, residual, lanes, bounds);
}

// Output columns [begin, end) by edge_pixels: R at a time, then the rest by the fewest pixels per
// call that covers it (a one-pixel border costs one pixel's work, not R's).
template <size_t K, size_t R, Activation A, bool Residual>
__attribute__((target("avx512f"), always_inline)) inline void edge_run(const __m512 (&wt)[K * K], __m512 bias,
                                                                       const RowInputs<K>& in, const PackedConvShape& s,
                                                                       size_t begin, size_t end, float* y,
                                                                       const float* residual, __mmask16 lanes,
                                                                       const EpilogueBounds& bounds) {
  size_t ox = begin;
  for (; ox + R <= end; ox += R)
    edge_pixels<K, R, A, Residual>(wt, bias, in, s, ox, end - 1, y, residual, lanes, bounds);
  const size_t rest = end - ox;
  if (rest == 0) return;
  if (rest == 1) return edge_pixels<K, 1, A, Residual>(wt, bias, in, s, ox, end - 1, y, residual, lanes, bounds);
  if (rest == 2) return edge_pixels<K, 2, A, Residual>(wt, bias, in, s, ox, end - 1, y, residual, lanes, bounds);
  if (rest <= 4 || R <= 4)
    return edge_pixels<K, 4, A, Residual>(wt, bias, in, s, ox, end - 1, y, residual, lanes, bounds);
  edge_pixels<K, R, A, Residual>(wt, bias, in, s, ox, end - 1, y, residual, lanes, bounds);
}

// Pixels per call: K x K weight vectors and R sums fill most of the 32 vector registers.
template <size_t K>
constexpr size_t kPixels = K == 3 ? 8 : 4;

// Output row oy of image n, channel blocks [first, last): the sums and the output stage.
template <size_t K, Activation A, bool Residual>
__attribute__((target("avx512f"))) void sums_row(const Job& job, size_t n, size_t oy, size_t first, size_t last) {
  constexpr size_t R = kPixels<K>;
  const PackedConvShape& s = *job.s;
  const size_t c = s.channels;
  const EpilogueBounds bounds = avx512::bounds_of(*job.e);
  RowInputs<K> base{};
  for (size_t ky = 0; ky < K; ++ky) {
    const int64_t iy = static_cast<int64_t>(oy * s.stride_h) - s.pad_top + static_cast<int64_t>(ky * s.dilation_h);
    const bool ok = inside(iy, s.h);
    base.row_ok |= ok ? 1u << ky : 0u;
    base.rows[ky] = job.x + (n * s.h + (ok ? static_cast<size_t>(iy) : 0)) * s.w * c;
  }
  const bool all_rows = base.row_ok == (1u << K) - 1;
  const size_t pixel0 = (n * s.out_h + oy) * s.out_w * c;
  float* y_row = job.y + pixel0;
  const float* r_row = Residual ? job.e->residual + pixel0 : nullptr;
  for (size_t block = first; block < last; ++block) {
    const size_t c0 = block * kLanes;
    const __mmask16 lanes = c - c0 >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (c - c0)) - 1);
    const float* packed = job.w->data + block * block_floats(K * K);
    __m512 wt[K * K];
#pragma GCC unroll 25
    for (size_t t = 0; t < K * K; ++t) wt[t] = _mm512_loadu_ps(packed + t * kLanes);
    const __m512 bias = _mm512_loadu_ps(packed + K * K * kLanes);
    RowInputs<K> in = base;
    for (size_t ky = 0; ky < K; ++ky) in.rows[ky] += c0;
    float* y = y_row + c0;
    const float* r = Residual ? r_row + c0 : nullptr;
    // Whole groups of R interior pixels take the unmasked path; the rest, R at a time, the masked one.
    size_t begin = 0, end = 0;
    if (all_rows && lanes == 0xFFFF) {
      begin = job.inner_begin;
      end = begin + (job.inner_end - job.inner_begin) / R * R;
    }
    for (size_t ox = begin; ox < end; ox += R) inner_pixels<K, R, A, Residual>(wt, bias, in, s, ox, y, r, bounds);
    edge_run<K, R, A, Residual>(wt, bias, in, s, 0, begin, y, r, lanes, bounds);
    edge_run<K, R, A, Residual>(wt, bias, in, s, end, s.out_w, y, r, lanes, bounds);
  }
}

// The output stage over output row oy's channel blocks [first, last), in place (the row was just
// written: it is in L1).
template <Activation A, bool Residual>
__attribute__((target("avx512f"))) void finish_row(const Job& job, size_t n, size_t oy, size_t first, size_t last) {
  const PackedConvShape& s = *job.s;
  const size_t c = s.channels, c0 = first * kLanes, c1 = std::min(last * kLanes, c);
  const EpilogueBounds bounds = avx512::bounds_of(*job.e);
  const size_t pixel0 = (n * s.out_h + oy) * s.out_w * c;
  for (size_t ox = 0; ox < s.out_w; ++ox) {
    float* y = job.y + pixel0 + ox * c;
    const float* r = Residual ? job.e->residual + pixel0 + ox * c : nullptr;
    for (size_t ch = c0; ch < c1; ch += kLanes) {
      const __mmask16 lanes = c1 - ch >= kLanes ? __mmask16(0xFFFF) : __mmask16((1u << (c1 - ch)) - 1);
      const __m512 v = _mm512_maskz_loadu_ps(lanes, y + ch);
      _mm512_mask_storeu_ps(y + ch, lanes,
                            avx512::finish<A, Residual>(v, bounds, Residual ? r + ch : nullptr, lanes));
    }
  }
}

// Output row oy of image n, channel blocks [first, last). silu's two dozen vector operations and
// constants would push the K x K weights out of registers in the sums' loop (5x5: 25 of the 32),
// so its output stage runs as a second pass over the row instead.
template <size_t K, Activation A, bool Residual>
__attribute__((target("avx512f"))) void conv_row(const Job& job, size_t n, size_t oy, size_t first, size_t last) {
  if constexpr (A == Activation::silu) {
    sums_row<K, Activation::none, false>(job, n, oy, first, last);
    finish_row<A, Residual>(job, n, oy, first, last);
  } else {
    sums_row<K, A, Residual>(job, n, oy, first, last);
  }
}

using RowFn = void (*)(const Job&, size_t, size_t, size_t, size_t);

template <size_t K>
RowFn row_function(Activation a, bool residual) {
  switch (a) {
    case Activation::hardswish:
      return residual ? conv_row<K, Activation::hardswish, true> : conv_row<K, Activation::hardswish, false>;
    case Activation::silu: return residual ? conv_row<K, Activation::silu, true> : conv_row<K, Activation::silu, false>;
    case Activation::none: break;
  }
  return residual ? conv_row<K, Activation::none, true> : conv_row<K, Activation::none, false>;
}

// The output columns whose taps are all inside the input: [begin, end), possibly empty.
std::pair<size_t, size_t> inner_columns(const PackedConvShape& s) {
  const auto stride = static_cast<int64_t>(s.stride_w);
  const int64_t begin = (s.pad_left + stride - 1) / stride;  // first ox with ox * stride - pad_left >= 0
  const int64_t reach = static_cast<int64_t>((s.kernel_w - 1) * s.dilation_w);
  const int64_t room = static_cast<int64_t>(s.w) - 1 - reach + s.pad_left;  // largest ox * stride allowed
  const int64_t end = room < 0 ? 0 : std::min(room / stride + 1, static_cast<int64_t>(s.out_w));
  return {static_cast<size_t>(std::min(begin, end)), static_cast<size_t>(end)};
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void depthwise_conv(const PackedDepthwise& w, const PackedConvShape& s, const float* x, float* y, const Epilogue& e,
                    pthreadpool_t pool) {
#if defined(__x86_64__)
  if (!depthwise_fits(w.kernel_h, w.kernel_w) || w.kernel_h != s.kernel_h || w.channels != s.channels)
    fail(ExitCode::failure, "internal: depthwise_conv weights of another kernel or channel count");
  const auto [inner_begin, inner_end] = inner_columns(s);
  const Job job{.w = &w, .s = &s, .x = x, .y = y, .e = &e, .inner_begin = inner_begin, .inner_end = inner_end};
  const RowFn row = w.kernel_h == 3 ? row_function<3>(e.activation, e.residual != nullptr)
                                    : row_function<5>(e.activation, e.residual != nullptr);
  // Rows are the unit of work; with few rows for the threads, each row's channel blocks are split
  // into parts too (7x7 layers on 2 threads: 7 rows would split 4 / 3).
  const size_t rows = s.n * s.out_h, blocks = blocks_of(s.channels);
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  const size_t parts = threads > 1 && rows < 8 * threads ? std::min(blocks, (8 * threads + rows - 1) / rows) : 1;
  parallel_chunks(pool, rows * parts, 1, [&](size_t begin, size_t end) {
    for (size_t unit = begin; unit < end; ++unit) {
      const size_t r = unit / parts, part = unit % parts;
      row(job, r / s.out_h, r % s.out_h, part * blocks / parts, (part + 1) * blocks / parts);
    }
  });
#else
  (void)w, (void)s, (void)x, (void)y, (void)e, (void)pool;
  fail(ExitCode::failure, "internal: depthwise_conv needs AVX-512F");
#endif
}

}  // namespace mt::cpu
