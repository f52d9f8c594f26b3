// int8_global_avg_pool of int8_vnni.h: per image and block of 64 channels, the pixels' bytes
// sign-extended and summed in 4 x 16 int32 lanes (exact, as the reference sums; by way of int16
// lanes over runs of pixels), minus
// pixels * x_zero, then requantized as every VNNI kernel does (int8_vnni_requant.h). Split across
// threads by pixels, each thread summing every channel of its rows into its own partial sums, added
// afterwards: split by channels, each thread read every row, half of them from the other core's
// cache (EfficientNet's 144 x 56 x 56 pool: 11.7 us on one thread, 24 us on two).
#include <algorithm>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kChannelBlock = 64;

#if defined(__x86_64__)
MT_AVX512_INTRINSICS_BEGIN
namespace {

// Adds pixels [p0, p1) of channels [c0, c0 + count) (count <= 64) of one image to sums[0, count).
// The bytes are summed in int16 lanes, 255 pixels at most (255 * 128 fits), then widened into the
// int32 sums: two sign extensions per 64 bytes instead of four, on the port the extensions share
// with the extracts (MobileNetV3's 672 x 14 x 14 pool: 8 of 11 uops per 64 bytes were on it).
MT_VNNI_TARGET void sum_block(const int8_t* x, size_t channels, size_t p0, size_t p1, size_t c0, size_t count,
                              int32_t* sums) {
  const __mmask64 mask = count >= 64 ? ~__mmask64{0} : (__mmask64{1} << count) - 1;
  __m512i acc[4];
  for (size_t k = 0; k < 4; ++k)
    acc[k] = _mm512_maskz_loadu_epi32(low_lanes(count > 16 * k ? count - 16 * k : 0), sums + 16 * k);
  constexpr size_t kRun = 255;
  for (size_t run = p0; run < p1; run += kRun) {
    __m512i low = _mm512_setzero_si512(), high = _mm512_setzero_si512();  // channels 0..31, 32..63
    for (size_t p = run; p < std::min(p1, run + kRun); ++p) {
      const __m512i v = _mm512_maskz_loadu_epi8(mask, x + p * channels + c0);
      low = _mm512_add_epi16(low, _mm512_cvtepi8_epi16(_mm512_castsi512_si256(v)));
      high = _mm512_add_epi16(high, _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(v, 1)));
    }
    acc[0] = _mm512_add_epi32(acc[0], _mm512_cvtepi16_epi32(_mm512_castsi512_si256(low)));
    acc[1] = _mm512_add_epi32(acc[1], _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(low, 1)));
    acc[2] = _mm512_add_epi32(acc[2], _mm512_cvtepi16_epi32(_mm512_castsi512_si256(high)));
    acc[3] = _mm512_add_epi32(acc[3], _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(high, 1)));
  }
  for (size_t k = 0; k < 4 && 16 * k < count; ++k)
    _mm512_mask_storeu_epi32(sums + 16 * k, low_lanes(count - 16 * k), acc[k]);
}

// y[c] = requantize(s[c] - pixels * x_zero) for c < channels, s the sum of the `slots` rows of
// `channels` partial sums (one per thread): sum(x - x_zero), modulo 2^32 as the reference's int32
// sum. The rows are read, not changed, so that any number of pools may finish from them.
MT_VNNI_TARGET void requantize_sums(const int32_t* sums, size_t slots, int8_t* y, size_t channels, size_t pixels,
                                    int32_t x_zero, float multiplier, const Int8Output& out) {
  const __m512i offset =
      _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(pixels) * static_cast<uint32_t>(x_zero)));
  const __m512 m = _mm512_set1_ps(multiplier);
  const vnni::OutputVectors o = vnni::output_vectors(out);
  for (size_t c = 0; c < channels; c += 16) {
    const __mmask16 lanes = low_lanes(channels - c);
    __m512i total = _mm512_maskz_loadu_epi32(lanes, sums + c);
    for (size_t slot = 1; slot < slots; ++slot)
      total = _mm512_add_epi32(total, _mm512_maskz_loadu_epi32(lanes, sums + slot * channels + c));
    vnni::requantize_store(y + c, lanes, _mm512_sub_epi32(total, offset), m, o);
  }
}

}  // namespace
MT_AVX512_INTRINSICS_END
#endif

void int8_add_pixel_sums(const int8_t* x, size_t pixels, size_t stride, size_t count, int32_t* sums) {
#if defined(__x86_64__)
  for (size_t c0 = 0; c0 < count; c0 += kChannelBlock)
    sum_block(x, stride, 0, pixels, c0, std::min(kChannelBlock, count - c0), sums + c0);
#else
  (void)x, (void)pixels, (void)stride, (void)count, (void)sums;
  fail(ExitCode::failure, "internal: int8_add_pixel_sums needs AVX512-VNNI");
#endif
}

void int8_global_avg_pool_of_sums(const int32_t* sums, size_t slots, int8_t* y, size_t batch, size_t pixels,
                                  size_t channels, int32_t x_zero, float multiplier, Int8Output out) {
#if defined(__x86_64__)
  for (size_t n = 0; n < batch; ++n)
    requantize_sums(sums + n * slots * channels, slots, y + n * channels, channels, pixels, x_zero, multiplier, out);
#else
  (void)sums, (void)slots, (void)y, (void)batch, (void)pixels, (void)channels, (void)x_zero, (void)multiplier,
      (void)out;
  fail(ExitCode::failure, "internal: int8_global_avg_pool_of_sums needs AVX512-VNNI");
#endif
}

size_t int8_global_avg_pool_scratch_bytes(size_t batch, size_t channels, size_t threads) {
  return std::max<size_t>(1, batch * std::max<size_t>(1, threads) * channels * sizeof(int32_t));
}

void int8_global_avg_pool(const int8_t* x, int8_t* y, size_t batch, size_t pixels, size_t channels, int32_t x_zero,
                          float multiplier, Int8Output out, void* scratch, size_t threads, ThreadPool* pool) {
#if defined(__x86_64__)
  auto* partial = static_cast<int32_t*>(scratch);
  // One thread below 16 KiB of input. Above, splitting pays even where one thread would be quick:
  // at 2 threads half of the input was written by the other core, and one thread alone pulls it all
  // across (MobileNetV3's 7x7x960 squeeze: 1.3-1.7 us on one thread, 1.1-1.3 us split; 28x28x72:
  // 2.3 us, 1.3 us).
  const size_t pool_threads = thread_count(pool);
  const size_t parts = batch * pixels * channels < (size_t{16} << 10) ? 1 : std::min(threads, pool_threads);
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
    parallel_for(pool, batch * parts, run);
  }
  int8_global_avg_pool_of_sums(partial, parts, y, batch, pixels, channels, x_zero, multiplier, out);
#else
  (void)x, (void)y, (void)batch, (void)pixels, (void)channels, (void)x_zero, (void)multiplier, (void)out, (void)scratch,
      (void)threads, (void)pool;
  fail(ExitCode::failure, "internal: int8_global_avg_pool needs AVX512-VNNI");
#endif
}

}  // namespace mt::cpu
