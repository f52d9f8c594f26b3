// A float32 depthwise conv and the pointwise conv (1x1, stride 1, one group) that alone reads its
// output, as one parallel region split by output rows: each thread computes its rows of the
// depthwise conv (depthwise_conv.h) into `mid`, then the packed GEMM (packed_gemm.h) of the same
// pixels while they are in its cache, then the step's tail on them (ShuffleNet's channel shuffle).
// Two steps would wake the pool twice and have each thread read rows the other core wrote; MobileNet's
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

// mid: the depthwise conv's output (NHWC, shape.out_h x shape.out_w x channels per image); y: the
// pointwise conv's (pointwise.n channels), the residual of its epilogue laid out as y.
void depthwise_pointwise(const DepthwisePointwise& fused, const PackedConvShape& shape, const float* x, float* mid,
                         float* y, const float* residual, const PixelRangeTail& tail, ThreadPool* pool);

}  // namespace mt::cpu
