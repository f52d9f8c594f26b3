// int8_global_avg_pool and int8_max_pool of int8_vnni.h. The average pool: per image and block of 64 channels, the pixels' bytes
// sign-extended and summed in 4 x 16 int32 lanes (exact, as the reference sums), minus
// pixels * x_zero, then requantized as every VNNI kernel does (int8_vnni_requant.h). Split across
// threads by pixels, each thread summing every channel of its rows into its own partial sums, added
// afterwards: split by channels, each thread read every row, half of them from the other core's
// cache (EfficientNet's 144 x 56 x 56 pool: 11.7 us on one thread, 24 us on two).
#include <algorithm>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kChannelBlock = 64;

#if defined(__x86_64__)
MT_AVX512_INTRINSICS_BEGIN
namespace {

// Adds pixels [p0, p1) of channels [c0, c0 + count) (count <= 64) of one image to sums[0, count).
MT_VNNI_TARGET void sum_block(const int8_t* x, size_t channels, size_t p0, size_t p1, size_t c0, size_t count,
                              int32_t* sums) {
  const __mmask64 mask = count >= 64 ? ~__mmask64{0} : (__mmask64{1} << count) - 1;
  __m512i acc[4];
  for (size_t k = 0; k < 4; ++k)
    acc[k] = _mm512_maskz_loadu_epi32(low_lanes(count > 16 * k ? count - 16 * k : 0), sums + 16 * k);
  for (size_t p = p0; p < p1; ++p) {
    const __m512i v = _mm512_maskz_loadu_epi8(mask, x + p * channels + c0);
    acc[0] = _mm512_add_epi32(acc[0], _mm512_cvtepi8_epi32(_mm512_castsi512_si128(v)));
    acc[1] = _mm512_add_epi32(acc[1], _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(v, 1)));
    acc[2] = _mm512_add_epi32(acc[2], _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(v, 2)));
    acc[3] = _mm512_add_epi32(acc[3], _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(v, 3)));
  }
  for (size_t k = 0; k < 4 && 16 * k < count; ++k)
    _mm512_mask_storeu_epi32(sums + 16 * k, low_lanes(count - 16 * k), acc[k]);
}

// y[c] = requantize(sums[c] - pixels * x_zero) for c < channels: sum(x - x_zero), modulo 2^32 as the
// reference's int32 sum.
MT_VNNI_TARGET void requantize_sums(const int32_t* sums, int8_t* y, size_t channels, size_t pixels, int32_t x_zero,
                                    float multiplier, const Int8Output& out) {
  const __m512i offset =
      _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(pixels) * static_cast<uint32_t>(x_zero)));
  const __m512 m = _mm512_set1_ps(multiplier);
  const vnni::OutputVectors o = vnni::output_vectors(out);
  for (size_t c = 0; c < channels; c += 16) {
    const __mmask16 lanes = low_lanes(channels - c);
    vnni::requantize_store(y + c, lanes, _mm512_sub_epi32(_mm512_maskz_loadu_epi32(lanes, sums + c), offset), m, o);
  }
}

// Adds the `parts` rows of `channels` partial sums (one per thread) into the first.
MT_VNNI_TARGET void add_parts(int32_t* partial, size_t parts, size_t channels) {
  for (size_t part = 1; part < parts; ++part)
    for (size_t c = 0; c < channels; c += 16) {
      const __mmask16 lanes = low_lanes(channels - c);
      const __m512i sum = _mm512_add_epi32(_mm512_maskz_loadu_epi32(lanes, partial + c),
                                           _mm512_maskz_loadu_epi32(lanes, partial + part * channels + c));
      _mm512_mask_storeu_epi32(partial + c, lanes, sum);
    }
}

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

// Output rows [begin, end) (rows of all images) of the max pool: per output pixel and block of 64
// channels, vpmaxsb over the window's taps inside the image (found once per row and, where the
// window reaches past the left or right edge, per pixel).
MT_VNNI_TARGET void max_pool_rows(const PackedConvShape& s, const int8_t* x, int8_t* y, size_t begin, size_t end) {
  const size_t c = s.channels, row_bytes = s.w * c;
  const int64_t last_left = static_cast<int64_t>(s.w) - static_cast<int64_t>((s.kernel_w - 1) * s.dilation_w + 1);
  for (size_t row = begin; row < end; ++row) {
    const size_t n = row / s.out_h, oy = row % s.out_h;
    const int64_t top = static_cast<int64_t>(oy * s.stride_h) - s.pad_top;
    const TapRange rows = taps_inside(top, s.kernel_h, s.dilation_h, s.h);
    const int8_t* image = x + n * s.h * row_bytes;
    int8_t* out = y + row * s.out_w * c;
    for (size_t ox = 0; ox < s.out_w; ++ox, out += c) {
      const int64_t left = static_cast<int64_t>(ox * s.stride_w) - s.pad_left;
      const TapRange columns =
          left >= 0 && left <= last_left ? TapRange{0, s.kernel_w} : taps_inside(left, s.kernel_w, s.dilation_w, s.w);
      const size_t step = s.dilation_w * c, taps = columns.last - columns.first;
      for (size_t c0 = 0; c0 < c; c0 += 64) {
        const __mmask64 mask = c - c0 >= 64 ? ~__mmask64{0} : (__mmask64{1} << (c - c0)) - 1;
        __m512i m = _mm512_set1_epi8(-128);
        for (size_t ky = rows.first; ky < rows.last; ++ky) {
          // The first tap inside: offsets stay inside the image (no pointer before it).
          const int64_t iy = top + static_cast<int64_t>(ky * s.dilation_h);
          const int64_t ix = left + static_cast<int64_t>(columns.first * s.dilation_w);
          const int8_t* tap = image + static_cast<size_t>(iy) * row_bytes + static_cast<size_t>(ix) * c + c0;
          if (taps == 3) {  // the common 3-wide window, unrolled
            m = _mm512_max_epi8(m, _mm512_maskz_loadu_epi8(mask, tap));
            m = _mm512_max_epi8(m, _mm512_maskz_loadu_epi8(mask, tap + step));
            m = _mm512_max_epi8(m, _mm512_maskz_loadu_epi8(mask, tap + 2 * step));
            continue;
          }
          for (size_t k = 0; k < taps; ++k) m = _mm512_max_epi8(m, _mm512_maskz_loadu_epi8(mask, tap + k * step));
        }
        _mm512_mask_storeu_epi8(out + c0, mask, m);
      }
    }
  }
}

}  // namespace
MT_AVX512_INTRINSICS_END
#endif

void int8_max_pool(const PackedConvShape& s, const int8_t* x, int8_t* y, ThreadPool* pool) {
#if defined(__x86_64__)
  // Chunks of at least 16 KiB of output: below that, sharing costs about what it saves.
  const size_t row_bytes = std::max<size_t>(1, s.out_w * s.channels);
  parallel_chunks(pool, s.n * s.out_h, std::max<size_t>(1, (size_t{16} << 10) / row_bytes),
                  [&](size_t begin, size_t end) { max_pool_rows(s, x, y, begin, end); });
#else
  (void)s, (void)x, (void)y, (void)pool;
  fail(ExitCode::failure, "internal: int8_max_pool needs AVX512-VNNI");
#endif
}

size_t int8_global_avg_pool_scratch_bytes(size_t batch, size_t channels, size_t threads) {
  return std::max<size_t>(1, batch * std::max<size_t>(1, threads) * channels * sizeof(int32_t));
}

void int8_global_avg_pool(const int8_t* x, int8_t* y, size_t batch, size_t pixels, size_t channels, int32_t x_zero,
                          float multiplier, Int8Output out, void* scratch, size_t threads, ThreadPool* pool) {
#if defined(__x86_64__)
  auto* partial = static_cast<int32_t*>(scratch);
  // One thread below 64 KiB of input, where waking the other costs about what it would save.
  const size_t pool_threads = thread_count(pool);
  const size_t parts = batch * pixels * channels < (size_t{64} << 10) ? 1 : std::min(threads, pool_threads);
  // Each part sums its share of an image's pixels (rows, as the convs before it split their
  // outputs, so each thread reads what it wrote) over every channel.
  auto run = [&](size_t unit) {
    const size_t n = unit / parts, part = unit % parts;
    int32_t* sums = partial + unit * channels;
    std::fill_n(sums, channels, 0);
    const int8_t* image = x + n * pixels * channels;
    for (size_t c0 = 0; c0 < channels; c0 += kChannelBlock)
      sum_block(image, channels, pixels * part / parts, pixels * (part + 1) / parts, c0,
                std::min(kChannelBlock, channels - c0), sums + c0);
  };
  if (parts == 1) {
    for (size_t unit = 0; unit < batch; ++unit) run(unit);
  } else {
    using Run = decltype(run);
    parallelize(
        pool, [](void* context, size_t unit) { (*static_cast<Run*>(context))(unit); }, &run, batch * parts);
  }
  for (size_t n = 0; n < batch; ++n) {
    add_parts(partial + n * parts * channels, parts, channels);
    requantize_sums(partial + n * parts * channels, y + n * channels, channels, pixels, x_zero, multiplier, out);
  }
#else
  (void)x, (void)y, (void)batch, (void)pixels, (void)channels, (void)x_zero, (void)multiplier, (void)out, (void)scratch,
      (void)threads, (void)pool;
  fail(ExitCode::failure, "internal: int8_global_avg_pool needs AVX512-VNNI");
#endif
}

}  // namespace mt::cpu
