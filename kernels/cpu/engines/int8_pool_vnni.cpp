// int8_global_avg_pool of int8_vnni.h: per image and block of up to 64 channels, the pixels'
// bytes sign-extended and summed in 4 x 16 int32 lanes (exact, as the reference sums), minus
// pixels * x_zero, then requantized as every VNNI kernel does (int8_vnni_requant.h). Split across
// threads by blocks of 16 channels where blocks of 64 would be few (EfficientNet's 144 channels:
// 3 blocks split 2 : 1, slower on 2 threads than on 1).
#include <algorithm>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/int8_vnni_requant.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {

constexpr size_t kChannelBlock = 64;

#if defined(__x86_64__)
#pragma GCC diagnostic push
// The intrinsics' unused pass-through operands, as in int8_gemm_vnni.cpp.
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
namespace {

// Channels [c0, c0 + width) of image n (width <= 64).
MT_VNNI_TARGET void pool_block(const int8_t* x, int8_t* y, size_t pixels, size_t channels, size_t c0, size_t width,
                               int32_t x_zero, float multiplier, const Int8Output& out) {
  const size_t count = std::min(width, channels - c0);
  const __mmask64 mask = count >= 64 ? ~__mmask64{0} : (__mmask64{1} << count) - 1;
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
  for (size_t p = 0; p < pixels; ++p) {
    const __m512i v = _mm512_maskz_loadu_epi8(mask, x + p * channels + c0);
    acc[0] = _mm512_add_epi32(acc[0], _mm512_cvtepi8_epi32(_mm512_castsi512_si128(v)));
    acc[1] = _mm512_add_epi32(acc[1], _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(v, 1)));
    acc[2] = _mm512_add_epi32(acc[2], _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(v, 2)));
    acc[3] = _mm512_add_epi32(acc[3], _mm512_cvtepi8_epi32(_mm512_extracti32x4_epi32(v, 3)));
  }
  // sum(x - x_zero) = sum(x) - pixels * x_zero, modulo 2^32 as the reference's int32 sum.
  const __m512i offset =
      _mm512_set1_epi32(static_cast<int32_t>(static_cast<uint32_t>(pixels) * static_cast<uint32_t>(x_zero)));
  const __m512 m = _mm512_set1_ps(multiplier);
  const vnni::OutputVectors o = vnni::output_vectors(out);
  for (size_t k = 0; k < 4 && 16 * k < count; ++k)
    vnni::requantize_store(y + c0 + 16 * k, vnni::lanes(count - 16 * k), _mm512_sub_epi32(acc[k], offset), m, o);
}

}  // namespace
#pragma GCC diagnostic pop
#endif

void int8_global_avg_pool(const int8_t* x, int8_t* y, size_t batch, size_t pixels, size_t channels, int32_t x_zero,
                          float multiplier, Int8Output out, pthreadpool_t pool) {
#if defined(__x86_64__)
  const size_t threads = pool == nullptr ? 1 : pthreadpool_get_threads_count(pool);
  // One thread below 64 KiB of input: waking the other costs about what the pooling does.
  pthreadpool_t used = batch * pixels * channels < (size_t{64} << 10) ? nullptr : pool;
  const size_t wide = batch * ((channels + kChannelBlock - 1) / kChannelBlock);
  const size_t width = used != nullptr && wide < 4 * threads ? 16 : kChannelBlock;
  const size_t blocks = (channels + width - 1) / width;
  parallel_chunks(used, batch * blocks, 1, [&](size_t begin, size_t end) {
    for (size_t unit = begin; unit < end; ++unit) {
      const size_t n = unit / blocks;
      pool_block(x + n * pixels * channels, y + n * channels, pixels, channels, unit % blocks * width, width, x_zero,
                 multiplier, out);
    }
  });
#else
  (void)x, (void)y, (void)batch, (void)pixels, (void)channels, (void)x_zero, (void)multiplier, (void)out, (void)pool;
  fail(ExitCode::failure, "internal: int8_global_avg_pool needs AVX512-VNNI");
#endif
}

}  // namespace mt::cpu
