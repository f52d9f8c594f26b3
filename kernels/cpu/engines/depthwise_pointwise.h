// A float32 depthwise conv and the pointwise conv (1x1, stride 1, one group) that alone reads its
// output, as one parallel region: each thread takes an even share of the output pixels, computes
// the depthwise conv's rows that hold them (depthwise_conv.h) into its own scratch, then the packed
// GEMM (packed_gemm.h) of its pixels while they are in its cache, then the step's tail on them
// (ShuffleNet's channel shuffle). A row split between two shares is computed by both (7x7 layers on
// 2 threads: 4 depthwise rows each and 24 / 25 pixels of the GEMM, not 4 : 3 rows of both). Two
// steps would wake the pool twice and have each thread read rows the other core wrote; MobileNet's
// and ShuffleNet's blocks are this pair (the int8 path has its own, int8_vnni.h). Results equal
// those of the two steps. Requires depthwise_supported() and packed_gemm_supported().
#pragma once

#include <cstddef>

#include "kernels/cpu/engines/depthwise_conv.h"
#include "kernels/cpu/engines/epilogue.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

struct DepthwisePointwise {
  PackedDepthwise depthwise;
  Epilogue depthwise_epilogue;  // no residual
  PackedWeights pointwise;      // k = the depthwise conv's channels
  Epilogue pointwise_epilogue;  // its residual pointer set per run
};

// Bytes of scratch depthwise_pointwise needs on up to `threads` threads (64-byte aligned).
size_t depthwise_pointwise_scratch_bytes(const PackedConvShape& shape, size_t threads);

// y: the pointwise conv's output (NHWC, pointwise.n channels), the residual of its epilogue laid out
// as y; the depthwise output lives only in `scratch`.
void depthwise_pointwise(const DepthwisePointwise& fused, const PackedConvShape& shape, const float* x, void* scratch,
                         size_t threads, float* y, const float* residual, const PixelRangeTail& tail, ThreadPool* pool);

}  // namespace mt::cpu
