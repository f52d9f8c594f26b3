// Max pooling of float32 and int8 NHWC images on AVX-512 (F and BW): per output pixel and block of
// channels, the largest value of the window's taps inside the image (taps in the padding are left
// out; a window with none inside gives -inf, or -128). Split across the plan's threads by output
// rows, on mt's own pool, so that a plan without XNNPACK operators never parks its threads.
// Used for float32 where the packed-GEMM path is on and for int8 on the VNNI path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

bool max_pool_avx512_supported();

void max_pool(const PackedConvShape& shape, const float* x, float* y, ThreadPool* pool);
void max_pool(const PackedConvShape& shape, const int8_t* x, int8_t* y, ThreadPool* pool);

}  // namespace mt::cpu
