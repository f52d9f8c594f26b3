// A float32 pointwise conv (1x1, stride 1, one group: an inverted residual block's expansion) and
// the depthwise conv that alone reads its output, as one parallel region: each thread takes a
// contiguous range of the depthwise conv's output rows and, row by row, computes the expanded input
// rows they read (packed_gemm.h, one input row of pixels at a time, with the pointwise conv's
// output stage) into a ring of a few rows in its own scratch, then the depthwise output row from
// that ring (depthwise_conv.h). The expanded tensor, the largest of such a block (EfficientNet-B0's
// 96 x 112 x 112, 4.8 MB), never goes to memory: written and read apart, the depthwise conv read
// it at 25 GB/s from L3. Rows at a boundary between two threads' ranges are computed by both
// (pointwise_depthwise_pays keeps that small). Results equal those of the two steps. Requires
// depthwise_supported() and packed_gemm_supported().
#pragma once

#include <cstddef>

#include "kernels/cpu/engines/depthwise_conv.h"
#include "kernels/cpu/engines/epilogue.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

struct PointwiseDepthwise {
  PackedWeights pointwise;      // k = the input's channels, n = the depthwise conv's
  Epilogue pointwise_epilogue;  // no residual
  PackedDepthwise depthwise;
  Epilogue depthwise_epilogue;  // no residual
};

// Whether the fusion pays for a depthwise conv of this shape on `threads` threads: an expanded
// tensor larger than a core's L2 share (from 2 MiB: only the early, large layers), dilation 1, and
// at most an eighth more pointwise rows computed at the thread boundaries.
bool pointwise_depthwise_pays(const PackedConvShape& depthwise, size_t threads);

// Bytes of scratch pointwise_depthwise needs on up to `threads` threads (64-byte aligned).
size_t pointwise_depthwise_scratch_bytes(const PackedConvShape& depthwise, size_t threads);

// x: the pointwise conv's input (NHWC, pointwise.k channels, depthwise.n x h x w pixels); y: the
// depthwise conv's output (NHWC). `depthwise` is the depthwise conv's shape (its channels: the
// pointwise conv's outputs).
void pointwise_depthwise(const PointwiseDepthwise& fused, const PackedConvShape& depthwise, const float* x,
                         void* scratch, size_t threads, float* y, ThreadPool* pool);

}  // namespace mt::cpu
