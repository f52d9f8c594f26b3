// Matrix arithmetic that the reference kernels and the cpu backend both run, so they agree exactly.
#pragma once

#include <cstdint>

namespace mt {

// det: the determinants of `count` row-major n x n matrices, by LU decomposition with partial
// pivoting in double (a singular matrix gives 0), rounded to float32 once.
void determinants(int64_t count, int64_t n, const float* x, float* y);

}  // namespace mt
