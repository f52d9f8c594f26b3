// The stem convolution of stem_conv.h. Work goes output row by output row; a row goes in groups of
// R pixels (14, 8 or 6 for B = 2, 3 or 4: R x B sums, B = out_channels / 16 vectors each (the packing
// and kernel take 17 to 64 channels; stem_conv_fits chooses 32 on), fill most of the 32 vector
// registers). Per tap (kernel row, kernel column, input channel) a group loads the tap's B weight
// vectors and broadcasts each pixel's input value into B FMAs. Kernel rows outside the input are
// skipped; in a group with a tap column outside the input (at the row's ends) those pixels read a
// zero instead (their channel step is 0 on a zero), the others read the input directly.
#include "kernels/cpu/engines/stem_conv.h"

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

constexpr size_t kLanes = 16;  // output channels per vector

namespace {
size_t blocks_of(size_t channels) { return (channels + kLanes - 1) / kLanes; }
}  // namespace

bool stem_conv_supported() { return cpu_has_avx512f(); }

// Where it pays, measured in whole networks (profiles, 1 thread): 64 output channels, 3 or 4
// vectors of sums per broadcast input, win clearly (SqueezeNet's 3 -> 64 stem 0.30 -> 0.21 ms,
// ResNet's 7x7 one 1.35 -> 1.02 ms against the gathered GEMM). 32 channels win too since the image
// is prefetched a row ahead (prefetch_next_row) and 14 pixels share each weight load: MobileNetV2's
// 3 -> 32 stem 0.20 ms on XNNPACK, 0.14 ms here, and no indirection buffer of 113k pointers to fill
// at planning (0.35 ms). Fewer than 32 (a partial second vector) were not measured: XNNPACK's.
bool stem_conv_fits(size_t in_channels, size_t out_channels, size_t kernel_h, size_t kernel_w) {
  return in_channels >= 1 && in_channels <= 4 && out_channels >= 32 && out_channels <= 64 && kernel_h <= 7 &&
         kernel_w <= 7;
}

size_t stem_bytes(size_t in_channels, size_t out_channels, size_t kernel_h, size_t kernel_w) {
  return (kernel_h * kernel_w * in_channels + 1) * blocks_of(out_channels) * kLanes * sizeof(float);
}

PackedStem pack_stem_weights(void* memory, const float* ohwi, const float* bias, size_t in_channels,
                             size_t out_channels, size_t kernel_h, size_t kernel_w) {
  const size_t taps = kernel_h * kernel_w * in_channels, width = blocks_of(out_channels) * kLanes;
  auto* p = static_cast<float*>(memory);
  std::memset(p, 0, stem_bytes(in_channels, out_channels, kernel_h, kernel_w));
  for (size_t o = 0; o < out_channels; ++o) {
    for (size_t t = 0; t < taps; ++t) p[t * width + o] = ohwi[o * taps + t];
    if (bias != nullptr) p[taps * width + o] = bias[o];
  }
  return PackedStem{
      .data = p, .in_channels = in_channels, .out_channels = out_channels, .kernel_h = kernel_h, .kernel_w = kernel_w};
}

#if defined(__x86_64__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"  // AVX-512 intrinsics' pass-through operands (epilogue_avx512.h)
#if !defined(__clang__)                           // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

using avx512::EpilogueBounds;

struct Job {
  const PackedStem* w;
  const PackedConvShape* s;
  const float* x;
  StemStrides strides;
  float* y;
  const Epilogue* e;
};

// The value a pixel reads for a tap outside the input, with a channel step of 0.
constexpr float kZero = 0.0f;

// Pixels per group for B vectors of output channels.
template <size_t B>
constexpr size_t kPixels = B == 2 ? 14 : (B == 3 ? 8 : 6);

// The output stage of output row oy's pixels [0, out_w), in place (just written: in L1).
template <size_t B, Activation A, bool Residual>
__attribute__((target("avx512f"))) void finish_row(const Job& job, size_t n, size_t oy) {
  const PackedConvShape& s = *job.s;
  const size_t m = job.w->out_channels;
  const EpilogueBounds bounds = avx512::bounds_of(*job.e);
  const size_t pixel0 = (n * s.out_h + oy) * s.out_w * m;
  for (size_t i = 0; i < s.out_w * m; i += kLanes) {
    const size_t at = pixel0 + i;
    const __mmask16 lanes = low_lanes(s.out_w * m - i);
    const __m512 v = _mm512_maskz_loadu_ps(lanes, job.y + at);
    _mm512_mask_storeu_ps(job.y + at, lanes,
                          avx512::finish<A, Residual>(v, bounds, Residual ? job.e->residual + at : nullptr, lanes));
  }
}

// Fetches into the cache the input that the pixels [ox, ox + count) of output row oy + 1 read and row oy
// does not. An image read straight from the caller (cold: the rest of a network has evicted it) comes
// in a few short rows per plane, too short for the hardware prefetchers: without this, MobileNetV2's
// 3 -> 32 stem waits on memory for most of its time (0.33 against 0.13 ms, a cold against a hot image).
__attribute__((target("avx512f"))) void prefetch_next_row(const Job& job, size_t n, size_t oy, size_t ox,
                                                          size_t count) {
  const PackedConvShape& s = *job.s;
  const StemStrides& st = job.strides;
  if (oy + 1 >= s.out_h) return;
  const int64_t last_read = static_cast<int64_t>(oy * s.stride_h + (s.kernel_h - 1) * s.dilation_h) - s.pad_top;
  const int64_t left = std::max<int64_t>(static_cast<int64_t>(ox * s.stride_w) - s.pad_left, 0);
  const int64_t right = std::min<int64_t>(
      static_cast<int64_t>((ox + count - 1) * s.stride_w + (s.kernel_w - 1) * s.dilation_w) - s.pad_left,
      static_cast<int64_t>(s.w) - 1);
  if (left > right) return;
  // Planar input (NCHW): one run per channel; interleaved (NHWC): one run holds every channel.
  const bool planar = st.channel > st.column;
  const size_t planes = planar ? job.w->in_channels : 1;
  const size_t extra = planar ? 0 : (job.w->in_channels - 1) * st.channel;
  const float* image = job.x + n * st.image;
  for (size_t ky = 0; ky < s.kernel_h; ++ky) {
    const int64_t y = static_cast<int64_t>((oy + 1) * s.stride_h + ky * s.dilation_h) - s.pad_top;
    if (y <= last_read || !inside(y, s.h)) continue;
    for (size_t c = 0; c < planes; ++c) {
      const float* run = image + static_cast<size_t>(y) * st.row + c * st.channel;
      const auto first = reinterpret_cast<uintptr_t>(run + static_cast<size_t>(left) * st.column) & ~uintptr_t{63};
      const auto last = reinterpret_cast<uintptr_t>(run + static_cast<size_t>(right) * st.column + extra);
      for (uintptr_t line = first; line <= last; line += 64)
        // asm: GCC 12 deletes _mm_prefetch here (a call without effects once inlined).
        asm volatile("prefetcht0 %0" : : "m"(*reinterpret_cast<const char*>(line)));
    }
  }
}

// Output row oy of image n: the sums and the output stage (A and Residual), R pixels at a time.
// P: the input's column step times the stride, in floats, when known at compile time (1 or 2: an
// NCHW image at stride 1 or 2), else 0.
template <size_t B, size_t P, Activation A, bool Residual>
__attribute__((target("avx512f"))) void sums_row(const Job& job, size_t n, size_t oy) {
  constexpr size_t R = kPixels<B>;
  const PackedConvShape& s = *job.s;
  const PackedStem& w = *job.w;
  const StemStrides& st = job.strides;
  const size_t cin = w.in_channels, m = w.out_channels, width = B * kLanes;
  const EpilogueBounds bounds = avx512::bounds_of(*job.e);
  const __mmask16 last_lanes = low_lanes(m % kLanes == 0 ? kLanes : m % kLanes);
  size_t ky0 = s.kernel_h, ky1 = 0;  // kernel rows inside the input: [ky0, ky1)
  for (size_t ky = 0; ky < s.kernel_h; ++ky)
    if (inside(static_cast<int64_t>(oy * s.stride_h + ky * s.dilation_h) - s.pad_top, s.h)) {
      ky0 = std::min(ky0, ky);
      ky1 = ky + 1;
    }
  ky0 = std::min(ky0, ky1);
  const float* image = job.x + n * st.image;
  const size_t row0 = (n * s.out_h + oy) * s.out_w;
  for (size_t ox = 0; ox < s.out_w; ox += R) {
    const size_t count = std::min(R, s.out_w - ox);
    prefetch_next_row(job, n, oy, ox, count);
    __m512 acc[R][B];
#pragma GCC unroll 4
    for (size_t b = 0; b < B; ++b) {
      const __m512 bias = _mm512_loadu_ps(w.data + w.kernel_h * w.kernel_w * cin * width + b * kLanes);
#pragma GCC unroll 16
      for (size_t j = 0; j < R; ++j) acc[j][b] = bias;
    }
    for (size_t ky = ky0; ky < ky1; ++ky) {
      const float* row = image + (oy * s.stride_h + ky * s.dilation_h - static_cast<size_t>(s.pad_top)) * st.row;
      for (size_t kx = 0; kx < s.kernel_w; ++kx) {
        const float* weights = w.data + (ky * w.kernel_w + kx) * cin * width;
        const int64_t left = static_cast<int64_t>(ox * s.stride_w + kx * s.dilation_w) - s.pad_left;
        const int64_t right =
            static_cast<int64_t>((std::min(ox + R, s.out_w) - 1) * s.stride_w + kx * s.dilation_w) - s.pad_left;
        if (P != 0 && left >= 0 && right < static_cast<int64_t>(s.w) && ox + R <= s.out_w) {
          // Every pixel's column inside, P floats apart: one pointer, constant offsets.
          const float* column = row + static_cast<size_t>(left) * st.column;
          for (size_t c = 0; c < cin; ++c, weights += width, column += st.channel) {
            // One base pointer, the pixels at constant offsets from it (else GCC keeps a pointer per
            // pixel, 14 of them, and spills).
            asm("" : "+r"(column));
            __m512 wv[B];
#pragma GCC unroll 4
            for (size_t b = 0; b < B; ++b) wv[b] = _mm512_loadu_ps(weights + b * kLanes);
#pragma GCC unroll 16
            for (size_t j = 0; j < R; ++j) {
              const __m512 v = _mm512_set1_ps(column[j * P]);
#pragma GCC unroll 4
              for (size_t b = 0; b < B; ++b) acc[j][b] = _mm512_fmadd_ps(v, wv[b], acc[j][b]);
            }
          }
          continue;
        }
        const float* p[R];  // pixel j's input at channel 0 of this tap, or the zero
        size_t step[R];     // its channel step: st.channel, or 0 on the zero
#pragma GCC unroll 16
        for (size_t j = 0; j < R; ++j) {
          const int64_t ix =
              static_cast<int64_t>(std::min(ox + j, s.out_w - 1) * s.stride_w + kx * s.dilation_w) - s.pad_left;
          const bool in = inside(ix, s.w);
          p[j] = in ? row + static_cast<size_t>(ix) * st.column : &kZero;
          step[j] = in ? st.channel : 0;
        }
        for (size_t c = 0; c < cin; ++c, weights += width) {
          __m512 wv[B];
#pragma GCC unroll 4
          for (size_t b = 0; b < B; ++b) wv[b] = _mm512_loadu_ps(weights + b * kLanes);
#pragma GCC unroll 16
          for (size_t j = 0; j < R; ++j) {
            const __m512 v = _mm512_set1_ps(p[j][c * step[j]]);
#pragma GCC unroll 4
            for (size_t b = 0; b < B; ++b) acc[j][b] = _mm512_fmadd_ps(v, wv[b], acc[j][b]);
          }
        }
      }
    }
#pragma GCC unroll 16
    for (size_t j = 0; j < R; ++j) {
      if (j >= count) break;
      const size_t at = (row0 + ox + j) * m;
#pragma GCC unroll 4
      for (size_t b = 0; b < B; ++b) {
        const __mmask16 lanes = b + 1 == B ? last_lanes : __mmask16(0xFFFF);
        const size_t o = at + b * kLanes;
        _mm512_mask_storeu_ps(
            job.y + o, lanes,
            avx512::finish<A, Residual>(acc[j][b], bounds, Residual ? job.e->residual + o : nullptr, lanes));
      }
    }
  }
}

// Output row oy of image n. silu's constants would crowd 24 or more sums out of registers: then its
// output stage runs as a second pass over the row (measured slower than in registers for 16 sums).
template <size_t B, size_t P, Activation A, bool Residual>
__attribute__((target("avx512f"))) void conv_row(const Job& job, size_t n, size_t oy) {
  if constexpr (A == Activation::silu && B > 2) {
    sums_row<B, P, Activation::none, false>(job, n, oy);
    finish_row<B, A, Residual>(job, n, oy);
  } else {
    sums_row<B, P, A, Residual>(job, n, oy);
  }
}

using RowFn = void (*)(const Job&, size_t, size_t);

template <size_t B, size_t P>
RowFn row_function(Activation a, bool residual) {
  switch (a) {
    case Activation::hardswish:
      return residual ? conv_row<B, P, Activation::hardswish, true> : conv_row<B, P, Activation::hardswish, false>;
    case Activation::silu:
      return residual ? conv_row<B, P, Activation::silu, true> : conv_row<B, P, Activation::silu, false>;
    case Activation::none: break;
  }
  return residual ? conv_row<B, P, Activation::none, true> : conv_row<B, P, Activation::none, false>;
}

template <size_t B>
RowFn row_function(size_t pixel_step, const Epilogue& e) {
  const bool residual = e.residual != nullptr;
  if (pixel_step == 1) return row_function<B, 1>(e.activation, residual);
  if (pixel_step == 2) return row_function<B, 2>(e.activation, residual);
  return row_function<B, 0>(e.activation, residual);
}

RowFn row_function(size_t blocks, size_t pixel_step, const Epilogue& e) {
  switch (blocks) {
    case 2: return row_function<2>(pixel_step, e);
    case 3: return row_function<3>(pixel_step, e);
    default: return row_function<4>(pixel_step, e);
  }
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void stem_conv(const PackedStem& w, const PackedConvShape& s, const float* x, const StemStrides& strides, float* y,
               const Epilogue& e, ThreadPool* pool) {
#if defined(__x86_64__)
  // The kernel itself takes 17 to 64 output channels (2 to 4 vectors), stem_conv_fits plans it from 48.
  const bool takes = w.in_channels >= 1 && w.in_channels <= 4 && w.out_channels > kLanes && w.out_channels <= 64 &&
                     w.kernel_h <= 7 && w.kernel_w <= 7;
  if (!takes || w.in_channels != s.channels ||
      w.kernel_h != s.kernel_h || w.kernel_w != s.kernel_w)
    fail(ExitCode::failure, "internal: stem_conv weights of another shape");
  const Job job{.w = &w, .s = &s, .x = x, .strides = strides, .y = y, .e = &e};
  const RowFn row = row_function(blocks_of(w.out_channels), strides.column * s.stride_w, e);
  parallel_chunks(pool, s.n * s.out_h, 1, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) row(job, r / s.out_h, r % s.out_h);
  });
#else
  (void)w, (void)s, (void)x, (void)strides, (void)y, (void)e, (void)pool;
  fail(ExitCode::failure, "internal: stem_conv needs AVX-512F");
#endif
}

}  // namespace mt::cpu
