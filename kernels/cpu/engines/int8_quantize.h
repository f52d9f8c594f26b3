// float32 -> int8 quantization of a whole tensor, as lib/ops/int8_arithmetic.h's quantize_value
// does it for one value (x / scale, NaN to the zero point, clamped, rounded half to even, plus the
// zero point): in place order, or from NCHW into NHWC in the same pass (a model's input, read by
// an int8 conv that wants NHWC: one pass instead of quantizing and then reordering the bytes).
// With `avx512` (the caller checked int8_vnni_supported()) 16 values per step; otherwise a
// portable loop. The results are equal either way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

struct QuantizeParams {
  float scale = 1;
  int32_t zero_point = 0;
};

// y[i] = quantize(x[i]) for i < n.
void int8_quantize(const float* x, int8_t* y, size_t n, QuantizeParams q, bool avx512, ThreadPool* pool);

// y (batch x pixels x channels) = quantize(x (batch x channels x pixels)).
void int8_quantize_to_nhwc(const float* x, int8_t* y, size_t batch, size_t channels, size_t pixels, QuantizeParams q,
                           bool avx512, ThreadPool* pool);

}  // namespace mt::cpu
