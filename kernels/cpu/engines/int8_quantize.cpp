// The quantize kernels of int8_quantize.h. The portable loop rounds half to even by adding and
// subtracting 1.5 * 2^23 (it vectorizes, where a libm call per value would not); the AVX-512 one
// converts with vcvtps2dq in the default rounding mode; both divide, as the reference does (a
// product with 1 / scale rounds differently).
#include "kernels/cpu/engines/int8_quantize.h"

#include <algorithm>

#include "kernels/cpu/plan/parallel.h"

#include "kernels/cpu/engines/int8_vnni_requant.h"  // immintrin.h, MT_AVX512_INTRINSICS_BEGIN

namespace mt::cpu {
namespace {

constexpr size_t kTile = 16;         // values per vector step (pixels of the NHWC kernel)
constexpr size_t kMinChunk = 16384;  // values below which one thread quantizes alone

// The clamp bounds relative to the zero point, as quantize_value clamps.
float low_of(QuantizeParams q) { return -128.0f - static_cast<float>(q.zero_point); }
float high_of(QuantizeParams q) { return 127.0f - static_cast<float>(q.zero_point); }

// Values x[i * stride] for i < n into y[i * y_stride].
void quantize_portable(const float* x, size_t stride, int8_t* y, size_t y_stride, size_t n, QuantizeParams q) {
  const float s = q.scale, zero = static_cast<float>(q.zero_point), lo = low_of(q), hi = high_of(q);
  for (size_t i = 0; i < n; ++i) {
    float v = x[i * stride] / s;
    v = v != v ? 0.0f : v;  // NaN quantizes to the zero point
    v = v < lo ? lo : (v > hi ? hi : v);
    // Round half to even as nearbyint does: adding and subtracting 1.5 * 2^23 rounds any |v| < 2^22
    // in the default rounding mode, and |v| <= 255 here.
    v = (v + 0x1.8p23f) - 0x1.8p23f;
    y[i * y_stride] = static_cast<int8_t>(v + zero);
  }
}

#if defined(__x86_64__)
#define MT_QUANTIZE_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi")))
MT_AVX512_INTRINSICS_BEGIN

struct Vectors {
  __m512 scale, low, high;
  __m512i zero;
};

MT_QUANTIZE_TARGET Vectors vectors_of(QuantizeParams q) {
  return {_mm512_set1_ps(q.scale), _mm512_set1_ps(low_of(q)), _mm512_set1_ps(high_of(q)),
          _mm512_set1_epi32(q.zero_point)};
}

// The 16 values of `mask` at x, quantized, as bytes.
MT_QUANTIZE_TARGET __m128i quantize16(const float* x, __mmask16 mask, const Vectors& k) {
  __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(mask, x), k.scale);
  v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_setzero_ps());
  v = _mm512_min_ps(_mm512_max_ps(v, k.low), k.high);
  return _mm512_cvtepi32_epi8(_mm512_add_epi32(_mm512_cvtps_epi32(v), k.zero));
}


MT_QUANTIZE_TARGET void quantize_avx512(const float* x, int8_t* y, size_t n, QuantizeParams q) {
  const Vectors k = vectors_of(q);
  for (size_t i = 0; i < n; i += kTile) {
    const __mmask16 mask = low_lanes(n - i);
    _mm_mask_storeu_epi8(y + i, mask, quantize16(x + i, mask, k));
  }
}

// Tiles [begin, end) of 16 pixels (tiles per image: `tiles`) of x (NCHW) into y (NHWC).
MT_QUANTIZE_TARGET void quantize_tiles_to_nhwc(const float* x, int8_t* y, size_t channels, size_t pixels, size_t tiles,
                                               size_t begin, size_t end, QuantizeParams q) {
  const Vectors k = vectors_of(q);
  // Up to 4 channels: 16 pixels x 4 channels in one vector, interleaved by one vpermb (byte j of the
  // output: pixel j / channels, channel j % channels).
  alignas(64) uint8_t order[64] = {};
  if (channels <= 4)
    for (size_t j = 0; j < kTile * channels; ++j) order[j] = static_cast<uint8_t>(j % channels * kTile + j / channels);
  const __m512i interleave = _mm512_load_si512(order);
  for (size_t t = begin; t < end; ++t) {
    const size_t p0 = t % tiles * kTile, count = std::min(kTile, pixels - p0);
    const float* image = x + t / tiles * channels * pixels;
    int8_t* out = y + t / tiles * pixels * channels + p0 * channels;
    const __mmask16 mask = low_lanes(count);
    if (channels <= 4) {
      __m512i planes = _mm512_setzero_si512();
      for (size_t c = 0; c < channels; ++c) {
        const __m512i q16 = _mm512_castsi128_si512(quantize16(image + c * pixels + p0, mask, k));
        planes = _mm512_mask_blend_epi32(__mmask16(0xF << (4 * c)), planes, _mm512_shuffle_i32x4(q16, q16, 0));
      }
      const size_t bytes = count * channels;
      _mm512_mask_storeu_epi8(out, bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1,
                              _mm512_permutexvar_epi8(interleave, planes));
      continue;
    }
    alignas(16) int8_t plane[kTile];
    for (size_t c = 0; c < channels; ++c) {
      _mm_store_si128(reinterpret_cast<__m128i*>(plane), quantize16(image + c * pixels + p0, mask, k));
      for (size_t i = 0; i < count; ++i) out[i * channels + c] = plane[i];
    }
  }
}

MT_AVX512_INTRINSICS_END
#endif

}  // namespace

void int8_quantize(const float* x, int8_t* y, size_t n, QuantizeParams q, bool avx512, ThreadPool* pool) {
  parallel_chunks(pool, n, kMinChunk, [=](size_t begin, size_t end) {
#if defined(__x86_64__)
    if (avx512) return quantize_avx512(x + begin, y + begin, end - begin, q);
#endif
    quantize_portable(x + begin, 1, y + begin, 1, end - begin, q);
  });
  (void)avx512;
}

void int8_quantize_to_nhwc(const float* x, int8_t* y, size_t batch, size_t channels, size_t pixels, QuantizeParams q,
                           bool avx512, ThreadPool* pool) {
  const size_t tiles = (pixels + kTile - 1) / kTile;
  const size_t min_tiles = std::max<size_t>(1, kMinChunk / std::max<size_t>(1, kTile * channels));
  parallel_chunks(pool, batch * tiles, min_tiles, [=](size_t begin, size_t end) {
#if defined(__x86_64__)
    if (avx512) return quantize_tiles_to_nhwc(x, y, channels, pixels, tiles, begin, end, q);
#endif
    for (size_t t = begin; t < end; ++t) {
      const size_t p0 = t % tiles * kTile, count = std::min(kTile, pixels - p0);
      const float* image = x + t / tiles * channels * pixels;
      int8_t* out = y + t / tiles * pixels * channels + p0 * channels;
      for (size_t c = 0; c < channels; ++c) quantize_portable(image + c * pixels + p0, 1, out + c, channels, count, q);
    }
  });
  (void)avx512;
}

}  // namespace mt::cpu
