// global_average_pool of global_pool.h: sums in float32 lanes, pixel by pixel in order within a
// share, then the shares in order: the same additions whatever the thread count.
#include "kernels/cpu/engines/global_pool.h"

#include <algorithm>

#include "kernels/cpu/engines/avx512_lanes.h"
#include "kernels/cpu/engines/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mt::cpu {
namespace {

// sums[c] += x[p * channels + c] over pixels [p0, p1), c < channels.
void sum_pixels_portable(const float* x, size_t channels, size_t p0, size_t p1, float* sums) {
  for (size_t p = p0; p < p1; ++p) {
    const float* pixel = x + p * channels;
    for (size_t c = 0; c < channels; ++c) sums[c] += pixel[c];
  }
}

#if defined(__x86_64__)
// The same on AVX-512: blocks of 64 channels held in four registers across the pixels.
__attribute__((target("avx512f"))) void sum_pixels_avx512(const float* x, size_t channels, size_t p0, size_t p1,
                                                          float* sums) {
  for (size_t c0 = 0; c0 < channels; c0 += 64) {
    __mmask16 lanes[4];
    __m512 acc[4];
    for (size_t k = 0; k < 4; ++k) {
      const size_t first = c0 + 16 * k, left = first < channels ? channels - first : 0;
      lanes[k] = low_lanes(left);
      acc[k] = _mm512_maskz_loadu_ps(lanes[k], sums + first);
    }
    for (size_t p = p0; p < p1; ++p) {
      const float* pixel = x + p * channels + c0;
      for (size_t k = 0; k < 4; ++k) acc[k] = _mm512_add_ps(acc[k], _mm512_maskz_loadu_ps(lanes[k], pixel + 16 * k));
    }
    for (size_t k = 0; k < 4; ++k) _mm512_mask_storeu_ps(sums + c0 + 16 * k, lanes[k], acc[k]);
  }
}
#endif

void sum_pixels(const float* x, size_t channels, size_t p0, size_t p1, float* sums) {
#if defined(__x86_64__)
  if (cpu_has_avx512f()) return sum_pixels_avx512(x, channels, p0, p1, sums);
#endif
  sum_pixels_portable(x, channels, p0, p1, sums);
}

}  // namespace

// Shares of an image's pixels from 64 KiB of input on (below, waking a thread costs about what it
// would save): four, which two or four threads split evenly.
constexpr size_t kShares = 4;

size_t global_average_pool_scratch_bytes(size_t batch, size_t channels) {
  return std::max<size_t>(1, batch * kShares * channels * sizeof(float));
}

void global_average_pool(const float* x, float* y, size_t batch, size_t pixels, size_t channels, void* scratch,
                         ThreadPool* pool) {
  auto* partial = static_cast<float*>(scratch);
  const size_t parts = batch * pixels * channels * sizeof(float) < (size_t{64} << 10) ? 1 : kShares;
  auto run = [&](size_t unit) {
    const size_t n = unit / parts, part = unit % parts;
    float* sums = partial + unit * channels;
    std::fill_n(sums, channels, 0.0f);
    sum_pixels(x + n * pixels * channels, channels, pixels * part / parts, pixels * (part + 1) / parts, sums);
  };
  const size_t threads = thread_count(pool);
  if (parts == 1 || threads == 1) {
    for (size_t unit = 0; unit < batch * parts; ++unit) run(unit);
  } else {
    parallel_for(pool, batch * parts, run);
  }
  const float scale = 1.0f / static_cast<float>(pixels);
  for (size_t n = 0; n < batch; ++n) {
    const float* sums = partial + n * parts * channels;
    for (size_t c = 0; c < channels; ++c) {
      float total = sums[c];
      for (size_t part = 1; part < parts; ++part) total += sums[part * channels + c];
      y[n * channels + c] = total * scale;
    }
  }
}

}  // namespace mt::cpu
