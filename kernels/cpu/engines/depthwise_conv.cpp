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
#include "kernels/cpu/engines/avx512_lanes.h"
#endif

#include "kernels/cpu/engines/cpu_features.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kLanes = 16;  // channels per vector

namespace {
constexpr size_t kPixels = 8;  // output pixels per group: 8 sums, a kernel row's <= 5 weights, one input
// The input columns a group of kPixels pixels reads in one kernel row, at stride S and dilation D;
// at most kMaxColumns (depthwise_fits: horizontal stride <= 2, dilation <= 4).
constexpr size_t columns_of(size_t k, size_t s, size_t d) { return (kPixels - 1) * s + (k - 1) * d + 1; }
constexpr size_t kMaxColumns = columns_of(5, 2, 4);
size_t blocks_of(size_t channels) { return (channels + kLanes - 1) / kLanes; }
// Floats of one channel block: its taps' weight vectors, then its bias vector.
size_t block_floats(size_t taps) { return (taps + 1) * kLanes; }
}  // namespace

bool depthwise_supported() { return cpu_has_avx512f(); }

bool depthwise_fits(size_t kernel_h, size_t kernel_w, size_t stride_w, size_t dilation_w) {
  return kernel_h == kernel_w && (kernel_h == 3 || kernel_h == 5) && stride_w <= 2 && dilation_w <= 4;
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

// One conv's run: its operands.
struct Job {
  const PackedDepthwise* w;
  const PackedConvShape* s;
  const float* x;
  float* y;  // holds the output rows from y_row0 on (counted over all images)
  const Epilogue* e;
  size_t y_row0 = 0;
  size_t ring_slots = 0;  // 0: x is the whole input; else a DepthwiseRing's rows
};

// Sums of a group of kPixels output pixels for kernel rows [ky0, ky1), from `rows[ky]`, each
// row's first input column, columns `step` floats apart. The input column i of a kernel row is
// loaded once and multiplied into every pixel j that reads it (i = j S + kx D): at stride 1 a row
// costs kPixels + K - 1 loads for K x kPixels FMAs (one 512-bit load per cycle is this CPU's
// limit, not the two FMAs). The kernel row's K weight vectors are loaded per row: 5 registers,
// not 25.
template <size_t K, size_t S, size_t D>
__attribute__((target("avx512f"), always_inline)) inline void group_sums(__m512 (&acc)[kPixels],
                                                                         const float* const* rows, size_t step,
                                                                         size_t ky0, size_t ky1,
                                                                         const float* weights) {
  constexpr size_t kColumns = columns_of(K, S, D);
  for (size_t ky = ky0; ky < ky1; ++ky) {
    __m512 w[K];
#pragma GCC unroll 5
    for (size_t kx = 0; kx < K; ++kx) w[kx] = _mm512_loadu_ps(weights + (ky * K + kx) * kLanes);
    const float* column = rows[ky];
#pragma GCC unroll 32
    for (size_t i = 0; i < kColumns; ++i, column += step) {
      // Skip columns no pixel reads (between the taps of a dilated kernel at stride 2, say).
      bool read = false;
#pragma GCC unroll 5
      for (size_t kx = 0; kx < K; ++kx) read = read || (i >= kx * D && (i - kx * D) % S == 0 && (i - kx * D) / S < kPixels);
      if (!read) continue;
      __m512 v = _mm512_loadu_ps(column);
      // Keep v a register: GCC would otherwise fold the load into each FMA as its memory operand
      // (K loads of the column again, the cost this loop exists to avoid).
      __asm__("" : "+v"(v));
#pragma GCC unroll 5
      for (size_t kx = 0; kx < K; ++kx)
        if (i >= kx * D && (i - kx * D) % S == 0 && (i - kx * D) / S < kPixels)
          acc[(i - kx * D) / S] = _mm512_fmadd_ps(w[kx], v, acc[(i - kx * D) / S]);
    }
  }
}

// The same for any stride and dilation (taken at run time): each tap one FMA with the input as
// its memory operand.
template <size_t K>
__attribute__((target("avx512f"), always_inline)) inline void group_sums_any(__m512 (&acc)[kPixels],
                                                                             const float* const* rows, size_t step,
                                                                             size_t ky0, size_t ky1,
                                                                             const float* weights, size_t stride,
                                                                             size_t dilation) {
  for (size_t ky = ky0; ky < ky1; ++ky) {
#pragma GCC unroll 5
    for (size_t kx = 0; kx < K; ++kx) {
      const __m512 w = _mm512_loadu_ps(weights + (ky * K + kx) * kLanes);
      const float* column = rows[ky] + kx * dilation * step;
#pragma GCC unroll 8
      for (size_t j = 0; j < kPixels; ++j, column += stride * step)
        acc[j] = _mm512_fmadd_ps(w, _mm512_loadu_ps(column), acc[j]);
    }
  }
}

// One output row of one channel block: where its input rows are and which are inside.
template <size_t K>
struct BlockRow {
  const float* rows[K];  // input row of kernel row ky (any row when outside), at the block's channels
  size_t ky0, ky1;       // kernel rows [ky0, ky1) are inside the input
  const float* weights;  // the block's packed taps, then its bias
  __mmask16 lanes;       // the block's channels
  const float* end;      // the input's end, offset as rows are (reads must stay before it)
};

template <size_t K, size_t S, size_t D>
__attribute__((target("avx512f"), always_inline)) inline void sums(__m512 (&acc)[kPixels], const float* const* rows,
                                                                   size_t step, const BlockRow<K>& b,
                                                                   const PackedConvShape& s) {
  if constexpr (S == 0) group_sums_any<K>(acc, rows, step, b.ky0, b.ky1, b.weights, s.stride_w, s.dilation_w);
  else group_sums<K, S, D>(acc, rows, step, b.ky0, b.ky1, b.weights);
}

// Output pixels [ox, ox + count) (count <= kPixels) of the row and block: their sums read straight
// from the input when every column they read is inside and the block has 16 channels; otherwise
// from a copy of those columns with zeros outside the input (and in the lanes past the channels),
// so that padding costs one copy per group, not a mask per tap. S and D: the stride and dilation
// (S = 0: any, at run time).
template <size_t K, size_t S, size_t D, Activation A, bool Residual>
__attribute__((target("avx512f"), always_inline)) inline void group(const BlockRow<K>& b, const PackedConvShape& s,
                                                                    size_t ox, size_t count, float* y,
                                                                    const float* residual,
                                                                    const EpilogueBounds& bounds) {
  const size_t stride = S == 0 ? s.stride_w : S, dilation = S == 0 ? s.dilation_w : D;
  const size_t columns = (kPixels - 1) * stride + (K - 1) * dilation + 1;
  const int64_t left = static_cast<int64_t>(ox * stride) - s.pad_left;
  const size_t c = s.channels;
  __m512 acc[kPixels];
  const __m512 bias = _mm512_loadu_ps(b.weights + K * K * kLanes);
#pragma GCC unroll 8
  for (size_t j = 0; j < kPixels; ++j) acc[j] = bias;
  // Straight from the input when the pixels stored read only columns inside the input (those past
  // `count` may read the next row's first pixels, or past the input's end: then not straight).
  const int64_t last_read = left + static_cast<int64_t>((count - 1) * stride + (K - 1) * dilation);
  const bool straight = b.lanes == 0xFFFF && left >= 0 && last_read < static_cast<int64_t>(s.w) && b.ky0 < b.ky1 &&
                        b.rows[b.ky1 - 1] + (static_cast<size_t>(left) + columns) * c <= b.end;
  if (straight) {
    const float* rows[K];
    for (size_t ky = 0; ky < K; ++ky) rows[ky] = b.rows[ky] + static_cast<size_t>(left) * c;
    sums<K, S, D>(acc, rows, c, b, s);
  } else {
    alignas(64) float copy[K][kMaxColumns * kLanes];
    const float* rows[K];
    for (size_t ky = b.ky0; ky < b.ky1; ++ky) {
      for (size_t i = 0; i < columns; ++i) {
        const int64_t ix = left + static_cast<int64_t>(i);
        const bool in = ix >= 0 && ix < static_cast<int64_t>(s.w);
        _mm512_store_ps(copy[ky] + i * kLanes,
                        _mm512_maskz_loadu_ps(in ? b.lanes : __mmask16(0), b.rows[ky] + (in ? ix : 0) * static_cast<int64_t>(c)));
      }
      rows[ky] = copy[ky];
    }
    sums<K, S, D>(acc, rows, kLanes, b, s);
  }
#pragma GCC unroll 8
  for (size_t j = 0; j < kPixels; ++j) {
    if (j >= count) break;
    const size_t offset = (ox + j) * c;
    _mm512_mask_storeu_ps(y + offset, b.lanes,
                          avx512::finish<A, Residual>(acc[j], bounds, Residual ? residual + offset : nullptr, b.lanes));
  }
}

// Output row oy of image n, channel blocks [first, last): the sums and the output stage.
template <size_t K, size_t S, size_t D, Activation A, bool Residual>
__attribute__((target("avx512f"))) void sums_row(const Job& job, size_t n, size_t oy, size_t first, size_t last) {
  const PackedConvShape& s = *job.s;
  const size_t c = s.channels;
  const EpilogueBounds bounds = avx512::bounds_of(*job.e);
  const float* rows[K];
  size_t ky0 = K, ky1 = 0;
  for (size_t ky = 0; ky < K; ++ky) {
    const int64_t iy = static_cast<int64_t>(oy * s.stride_h) - s.pad_top + static_cast<int64_t>(ky * s.dilation_h);
    const bool in = inside(iy, s.h);
    if (in) {
      ky0 = std::min(ky0, ky);
      ky1 = ky + 1;
    }
    const size_t g = n * s.h + (in ? static_cast<size_t>(iy) : 0);
    rows[ky] = job.x + (job.ring_slots != 0 ? g % job.ring_slots : g) * s.w * c;
  }
  ky0 = std::min(ky0, ky1);  // no row inside: none summed
  const size_t pixel0 = (n * s.out_h + oy) * s.out_w * c;
  for (size_t block = first; block < last; ++block) {
    const size_t c0 = block * kLanes;
    BlockRow<K> b{
        .ky0 = ky0,
        .ky1 = ky1,
        .weights = job.w->data + block * block_floats(K * K),
        .lanes = low_lanes(c - c0),
        .end = job.x + (job.ring_slots != 0 ? depthwise_ring_floats(s, job.ring_slots) : s.n * s.h * s.w * c) + c0};
    for (size_t ky = 0; ky < K; ++ky) b.rows[ky] = rows[ky] + c0;
    float* y = job.y + (pixel0 - job.y_row0 * s.out_w * c) + c0;
    const float* r = Residual ? job.e->residual + pixel0 + c0 : nullptr;
    for (size_t ox = 0; ox < s.out_w; ox += kPixels)
      group<K, S, D, A, Residual>(b, s, ox, std::min(kPixels, s.out_w - ox), y, r, bounds);
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
    float* y = job.y + (pixel0 - job.y_row0 * s.out_w * c) + ox * c;
    const float* r = Residual ? job.e->residual + pixel0 + ox * c : nullptr;
    for (size_t ch = c0; ch < c1; ch += kLanes) {
      const __mmask16 lanes = low_lanes(c1 - ch);
      const __m512 v = _mm512_maskz_loadu_ps(lanes, y + ch);
      _mm512_mask_storeu_ps(y + ch, lanes, avx512::finish<A, Residual>(v, bounds, Residual ? r + ch : nullptr, lanes));
    }
  }
}

// Output row oy of image n, channel blocks [first, last). silu's two dozen vector operations and
// constants would crowd the sums out of registers, so its output stage runs as a second pass over
// the row instead.
template <size_t K, size_t S, size_t D, Activation A, bool Residual>
__attribute__((target("avx512f"))) void conv_row(const Job& job, size_t n, size_t oy, size_t first, size_t last) {
  if constexpr (A == Activation::silu) {
    sums_row<K, S, D, Activation::none, false>(job, n, oy, first, last);
    finish_row<A, Residual>(job, n, oy, first, last);
  } else {
    sums_row<K, S, D, A, Residual>(job, n, oy, first, last);
  }
}

using RowFn = void (*)(const Job&, size_t, size_t, size_t, size_t);

template <size_t K, size_t S, size_t D>
RowFn row_function(Activation a, bool residual) {
  switch (a) {
    case Activation::hardswish:
      return residual ? conv_row<K, S, D, Activation::hardswish, true> : conv_row<K, S, D, Activation::hardswish, false>;
    case Activation::silu:
      return residual ? conv_row<K, S, D, Activation::silu, true> : conv_row<K, S, D, Activation::silu, false>;
    case Activation::none: break;
  }
  return residual ? conv_row<K, S, D, Activation::none, true> : conv_row<K, S, D, Activation::none, false>;
}

// The row function for this kernel, stride and dilation: the common ones (stride 1 or 2,
// dilation 1; stride 1, dilation 2) with the columns they share known at compile time.
template <size_t K>
RowFn row_function(const PackedConvShape& s, const Epilogue& e) {
  const bool residual = e.residual != nullptr;
  if (s.dilation_w == 1 && s.stride_w == 1) return row_function<K, 1, 1>(e.activation, residual);
  if (s.dilation_w == 1 && s.stride_w == 2) return row_function<K, 2, 1>(e.activation, residual);
  if (s.dilation_w == 2 && s.stride_w == 1) return row_function<K, 1, 2>(e.activation, residual);
  return row_function<K, 0, 0>(e.activation, residual);
}

void check_depthwise(const PackedDepthwise& w, const PackedConvShape& s) {
  if (w.kernel_h != s.kernel_h || w.kernel_w != s.kernel_w || w.channels != s.channels)
    fail(ExitCode::failure, "internal: depthwise_conv weights of another kernel or channel count");
  if (!depthwise_fits(s.kernel_h, s.kernel_w, s.stride_w, s.dilation_w))
    fail(ExitCode::failure, "internal: depthwise_conv of a stride or dilation it does not take");
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void depthwise_conv_rows(const PackedDepthwise& w, const PackedConvShape& s, const float* x, float* y,
                         const Epilogue& e, size_t begin, size_t end) {
#if defined(__x86_64__)
  check_depthwise(w, s);
  if (e.residual != nullptr) fail(ExitCode::failure, "internal: depthwise_conv_rows with a residual");
  const Job job{.w = &w, .s = &s, .x = x, .y = y, .e = &e, .y_row0 = begin};
  const RowFn row = w.kernel_h == 3 ? row_function<3>(s, e) : row_function<5>(s, e);
  for (size_t r = begin; r < end; ++r) row(job, r / s.out_h, r % s.out_h, 0, blocks_of(s.channels));
#else
  (void)w, (void)s, (void)x, (void)y, (void)e, (void)begin, (void)end;
  fail(ExitCode::failure, "internal: depthwise_conv needs AVX-512F");
#endif
}

size_t depthwise_ring_floats(const PackedConvShape& s, size_t slots) {
  return (slots * s.w + kMaxColumns) * s.channels;
}

void depthwise_conv_ring_row(const PackedDepthwise& w, const PackedConvShape& s, const DepthwiseRing& ring, float* y,
                             const Epilogue& e, size_t row) {
#if defined(__x86_64__)
  if (e.residual != nullptr) fail(ExitCode::failure, "internal: depthwise_conv_ring_row with a residual");
  const Job job{.w = &w, .s = &s, .x = ring.data, .y = y, .e = &e, .y_row0 = row, .ring_slots = ring.slots};
  const RowFn fn = w.kernel_h == 3 ? row_function<3>(s, e) : row_function<5>(s, e);
  fn(job, row / s.out_h, row % s.out_h, 0, blocks_of(s.channels));
#else
  (void)w, (void)s, (void)ring, (void)y, (void)e, (void)row;
  fail(ExitCode::failure, "internal: depthwise_conv needs AVX-512F");
#endif
}

void depthwise_conv(const PackedDepthwise& w, const PackedConvShape& s, const float* x, float* y, const Epilogue& e,
                    ThreadPool* pool) {
#if defined(__x86_64__)
  check_depthwise(w, s);
  const Job job{.w = &w, .s = &s, .x = x, .y = y, .e = &e};
  const RowFn row = w.kernel_h == 3 ? row_function<3>(s, e) : row_function<5>(s, e);
  // Rows are the unit of work; with few rows for the threads, each row's channel blocks are split
  // into parts too (7x7 layers on 2 threads: 7 rows would split 4 / 3).
  const size_t rows = s.n * s.out_h, blocks = blocks_of(s.channels);
  const size_t threads = thread_count(pool);
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
