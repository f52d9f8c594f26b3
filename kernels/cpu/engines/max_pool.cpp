#include "kernels/cpu/engines/max_pool.h"

#include <algorithm>
#include <limits>

#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/cpu/engines/avx512_lanes.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"  // MT_AVX512_INTRINSICS_BEGIN / END
#endif

namespace mt::cpu {

bool max_pool_avx512_supported() {
#if defined(__x86_64__)
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  return supported;
#else
  return false;
#endif
}

#if defined(__x86_64__)
#define MT_MAX_POOL_TARGET __attribute__((target("avx512f,avx512bw")))
MT_AVX512_INTRINSICS_BEGIN
namespace {

// One register of lanes of T: how many, a mask of the first `count`, the lowest value, load and max.
template <typename T>
struct Lanes;
template <>
struct Lanes<float> {
  static constexpr size_t kCount = 16;
  using Mask = __mmask16;
  using Vector = __m512;
  static Mask first(size_t count) { return low_lanes(count); }
  MT_MAX_POOL_TARGET static Vector lowest() { return _mm512_set1_ps(-std::numeric_limits<float>::infinity()); }
  MT_MAX_POOL_TARGET static Vector load(Mask m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  // max(tap, m): on a NaN tap the kept maximum, as the portable loop's `tap > m ? tap : m`.
  MT_MAX_POOL_TARGET static Vector max(Vector m, Vector tap) { return _mm512_max_ps(tap, m); }
  MT_MAX_POOL_TARGET static void store(float* p, Mask m, Vector v) { _mm512_mask_storeu_ps(p, m, v); }
};
template <>
struct Lanes<int8_t> {
  static constexpr size_t kCount = 64;
  using Mask = __mmask64;
  using Vector = __m512i;
  MT_MAX_POOL_TARGET static Mask first(size_t count) { return count >= kCount ? ~Mask{0} : (Mask{1} << count) - 1; }
  MT_MAX_POOL_TARGET static Vector lowest() { return _mm512_set1_epi8(-128); }
  MT_MAX_POOL_TARGET static Vector load(Mask m, const int8_t* p) { return _mm512_maskz_loadu_epi8(m, p); }
  MT_MAX_POOL_TARGET static Vector max(Vector m, Vector tap) { return _mm512_max_epi8(m, tap); }
  MT_MAX_POOL_TARGET static void store(int8_t* p, Mask m, Vector v) { _mm512_mask_storeu_epi8(p, m, v); }
};

// The taps [first, last) of a window starting at `start` (negative in the padding) whose
// coordinates start + k * dilation lie inside [0, size).
struct TapRange {
  size_t first, last;
};
TapRange taps_inside(int64_t start, size_t kernel, size_t dilation, size_t size) {
  size_t first = 0, last = kernel;
  while (first < last && start + static_cast<int64_t>(first * dilation) < 0) ++first;
  while (last > first && start + static_cast<int64_t>((last - 1) * dilation) >= static_cast<int64_t>(size)) --last;
  return {first, last};
}

// Output rows [begin, end) (rows of all images): the window's rows inside the image found once per
// output row, its columns once per pixel only where it reaches past the left or right edge.
template <typename T>
MT_MAX_POOL_TARGET void max_pool_rows(const PackedConvShape& s, const T* x, T* y, size_t begin, size_t end) {
  using L = Lanes<T>;
  const size_t c = s.channels, row_elements = s.w * c, step = s.dilation_w * c;
  const int64_t last_left = static_cast<int64_t>(s.w) - static_cast<int64_t>((s.kernel_w - 1) * s.dilation_w + 1);
  for (size_t row = begin; row < end; ++row) {
    const size_t n = row / s.out_h, oy = row % s.out_h;
    const int64_t top = static_cast<int64_t>(oy * s.stride_h) - s.pad_top;
    const TapRange rows = taps_inside(top, s.kernel_h, s.dilation_h, s.h);
    const T* image = x + n * s.h * row_elements;
    T* out = y + row * s.out_w * c;
    for (size_t ox = 0; ox < s.out_w; ++ox, out += c) {
      const int64_t left = static_cast<int64_t>(ox * s.stride_w) - s.pad_left;
      const TapRange columns =
          left >= 0 && left <= last_left ? TapRange{0, s.kernel_w} : taps_inside(left, s.kernel_w, s.dilation_w, s.w);
      const size_t taps = columns.last - columns.first;
      for (size_t c0 = 0; c0 < c; c0 += L::kCount) {
        const typename L::Mask mask = L::first(c - c0);
        typename L::Vector m = L::lowest();
        // No row or no column inside (a window wholly in the padding): -inf or -128, no pointer formed.
        for (size_t ky = rows.first; taps > 0 && ky < rows.last; ++ky) {
          // The first tap inside: offsets stay inside the image (no pointer before it).
          const int64_t iy = top + static_cast<int64_t>(ky * s.dilation_h);
          const int64_t ix = left + static_cast<int64_t>(columns.first * s.dilation_w);
          const T* tap = image + static_cast<size_t>(iy) * row_elements + static_cast<size_t>(ix) * c + c0;
          if (taps == 3) {  // the common 3-wide window, unrolled
            m = L::max(m, L::load(mask, tap));
            m = L::max(m, L::load(mask, tap + step));
            m = L::max(m, L::load(mask, tap + 2 * step));
            continue;
          }
          for (size_t k = 0; k < taps; ++k) m = L::max(m, L::load(mask, tap + k * step));
        }
        L::store(out + c0, mask, m);
      }
    }
  }
}

// The same rows for a pixel narrower than a register (ShuffleNet's 24 channels): a pixel at a time,
// each tap's load used a third of its lanes and the 9 taps cost 18 loads and maxes per pixel. Here each
// output row first takes the max of its window's input rows over the whole row, whole registers at a
// time, into `vertical` (s.w * channels values), then each pixel the max of its window's columns
// there. The same maxima (NaN taps skipped, as in max_pool_rows; float32 zeros may keep another sign).
template <typename T>
MT_MAX_POOL_TARGET void max_pool_rows_narrow(const PackedConvShape& s, const T* x, T* y, size_t begin, size_t end,
                                             T* vertical) {
  using L = Lanes<T>;
  const size_t c = s.channels, row_elements = s.w * c, step = s.dilation_w * c;
  const typename L::Mask pixel_mask = L::first(c);
  for (size_t row = begin; row < end; ++row) {
    const size_t n = row / s.out_h, oy = row % s.out_h;
    const int64_t top = static_cast<int64_t>(oy * s.stride_h) - s.pad_top;
    const TapRange rows = taps_inside(top, s.kernel_h, s.dilation_h, s.h);
    const T* image = x + n * s.h * row_elements;
    for (size_t i = 0; i < row_elements; i += L::kCount) {
      const typename L::Mask mask = L::first(row_elements - i);
      typename L::Vector m = L::lowest();
      for (size_t ky = rows.first; ky < rows.last; ++ky) {
        const int64_t iy = top + static_cast<int64_t>(ky * s.dilation_h);
        m = L::max(m, L::load(mask, image + static_cast<size_t>(iy) * row_elements + i));
      }
      L::store(vertical + i, mask, m);
    }
    T* out = y + row * s.out_w * c;
    for (size_t ox = 0; ox < s.out_w; ++ox, out += c) {
      const int64_t left = static_cast<int64_t>(ox * s.stride_w) - s.pad_left;
      const TapRange columns = taps_inside(left, s.kernel_w, s.dilation_w, s.w);
      typename L::Vector m = L::lowest();
      if (columns.first < columns.last) {
        const T* tap = vertical + static_cast<size_t>(left + static_cast<int64_t>(columns.first * s.dilation_w)) * c;
        for (size_t k = columns.first; k < columns.last; ++k, tap += step) m = L::max(m, L::load(pixel_mask, tap));
      }
      L::store(out, pixel_mask, m);
    }
  }
}

// Bytes of input row up to which max_pool_rows_narrow takes a pixel narrower than a register: its row
// of maxima lives on the stack, in L1.
constexpr size_t kNarrowRowBytes = size_t{16} << 10;

template <typename T>
void run_max_pool(const PackedConvShape& s, const T* x, T* y, ThreadPool* pool) {
  // Chunks of at least 16 KiB of output: below that, sharing costs about what it saves.
  const size_t row_bytes = std::max<size_t>(1, s.out_w * s.channels * sizeof(T));
  const bool narrow = s.channels < Lanes<T>::kCount && s.w * s.channels * sizeof(T) <= kNarrowRowBytes;
  parallel_chunks(pool, s.n * s.out_h, std::max<size_t>(1, (size_t{16} << 10) / row_bytes),
                  [&](size_t begin, size_t end) {
                    if (!narrow) return max_pool_rows(s, x, y, begin, end);
                    alignas(64) T vertical[kNarrowRowBytes / sizeof(T)];
                    max_pool_rows_narrow(s, x, y, begin, end, vertical);
                  });
}

}  // namespace
MT_AVX512_INTRINSICS_END
#endif

namespace {
template <typename T>
void max_pool_of(const PackedConvShape& shape, const T* x, T* y, ThreadPool* pool) {
#if defined(__x86_64__)
  run_max_pool(shape, x, y, pool);
#else
  (void)shape, (void)x, (void)y, (void)pool;
  fail(ExitCode::failure, "internal: max_pool needs AVX-512");
#endif
}
}  // namespace

void max_pool(const PackedConvShape& shape, const float* x, float* y, ThreadPool* pool) {
  max_pool_of(shape, x, y, pool);
}
void max_pool(const PackedConvShape& shape, const int8_t* x, int8_t* y, ThreadPool* pool) {
  max_pool_of(shape, x, y, pool);
}

}  // namespace mt::cpu
