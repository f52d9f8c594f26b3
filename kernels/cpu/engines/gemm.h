// A portable single-precision matrix multiply for what XNNPACK's fully connected operator cannot
// take (both operands computed at run time): C[M,N] = A[M,K] B[K,N] (+ bias[N]), with blocks of
// rows sharing each load of B so that the inner loop over N vectorises.
#pragma once

#include <cstddef>

namespace mt::cpu {

// Row strides in elements. bias may be null. Single-threaded: callers split rows or batches.
void gemm(size_t m, size_t n, size_t k, const float* a, size_t lda, const float* b, size_t ldb, float* c, size_t ldc,
          const float* bias);

}  // namespace mt::cpu
