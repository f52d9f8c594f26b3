// A float32 pointwise conv (1x1, stride 1, one group: an inverted residual block's expansion) and
// the depthwise conv that alone reads its output, as one parallel region: each thread takes a
// contiguous range of the depthwise conv's output rows and, row by row, computes the expanded input
// rows they read (packed_gemm.h, one input row of pixels at a time, with the pointwise conv's
// output stage) into a ring of a few rows in its own scratch, then the depthwise output row from
// that ring (depthwise_conv.h). The expanded tensor, the largest of such a block (EfficientNet-B0's
// 96 x 112 x 112, 4.8 MB), never goes to memory: written and read apart, the depthwise conv read
// it at 25 GB/s from L3. Rows at a boundary between two threads' ranges are computed by both
// (pointwise_depthwise_pays keeps that small). Where a pointwise conv alone reads the depthwise
// conv's output (the block's projection), it runs on each depthwise output row as soon as the row
// is computed, from the thread's cache: the whole block is one step. Results equal those of the
// separate steps. Requires depthwise_supported() and packed_gemm_supported().
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
  PackedWeights project;        // the pointwise conv after the depthwise one (k = its channels); panels null: none
  Epilogue project_epilogue;    // its residual pointer set per run
};

// Whether the fusion pays for a depthwise conv of this shape on `threads` threads: an expanded
// tensor larger than a core's L2 share (from 2 MiB: only the early, large layers), dilation 1, and
// at most an eighth more pointwise rows computed at the thread boundaries.
bool pointwise_depthwise_pays(const PackedConvShape& depthwise, size_t threads);

// Bytes of scratch pointwise_depthwise needs on up to `threads` threads (64-byte aligned), with a
// projection or not.
size_t pointwise_depthwise_scratch_bytes(const PackedConvShape& depthwise, size_t threads, bool project);

// x: the pointwise conv's input (NHWC, pointwise.k channels, depthwise.n x h x w pixels); y: the
// depthwise conv's output (NHWC), or with a projection the projection's (project.n channels), whose
// epilogue then adds `residual` (laid out as y) if not null. `depthwise` is the depthwise conv's
// shape (its channels: the pointwise conv's outputs).
void pointwise_depthwise(const PointwiseDepthwise& fused, const PackedConvShape& depthwise, const float* x,
                         void* scratch, size_t threads, float* y, const float* residual, ThreadPool* pool);

}  // namespace mt::cpu
