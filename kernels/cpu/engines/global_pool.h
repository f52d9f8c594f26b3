// Global average pooling of float32 NHWC images: y[n, c] = mean over the pixels of x[n, :, c].
// Split by pixels, as int8_pool_vnni.cpp splits the int8 pool: a thread sums its share of the rows
// (the rows the convs before it wrote, so it reads its own cache) into partial sums of its own,
// added afterwards. XNNPACK 2022's pool splits by image only, so one image ran on one thread
// (EfficientNet-B0's 17 pools: 0.135 ms on 1 thread, 0.132 on 2). The shares are the same for
// every thread count, so that the result does not depend on it.
#pragma once

#include <cstddef>

#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Bytes of scratch global_average_pool needs.
size_t global_average_pool_scratch_bytes(size_t batch, size_t channels);

void global_average_pool(const float* x, float* y, size_t batch, size_t pixels, size_t channels, void* scratch,
                         ThreadPool* pool);

}  // namespace mt::cpu
