#include "lib/ops/matrix_loops.h"

#include <cmath>
#include <utility>
#include <vector>

namespace mt {

void determinants(int64_t count, int64_t n, const float* x, float* y) {
  const auto size = static_cast<size_t>(n);
  std::vector<double> a(size * size);
  for (int64_t m = 0; m < count; ++m) {
    for (size_t i = 0; i < size * size; ++i) a[i] = x[static_cast<size_t>(m) * size * size + i];
    double det = 1.0;
    for (size_t col = 0; col < size && det != 0.0; ++col) {
      size_t pivot = col;
      for (size_t r = col + 1; r < size; ++r)
        if (std::fabs(a[r * size + col]) > std::fabs(a[pivot * size + col])) pivot = r;
      if (a[pivot * size + col] == 0.0) {
        det = 0.0;
        break;
      }
      if (pivot != col) {
        for (size_t c = 0; c < size; ++c) std::swap(a[pivot * size + c], a[col * size + c]);
        det = -det;
      }
      const double diagonal = a[col * size + col];
      det *= diagonal;
      for (size_t r = col + 1; r < size; ++r) {
        const double factor = a[r * size + col] / diagonal;
        for (size_t c = col; c < size; ++c) a[r * size + c] -= factor * a[col * size + c];
      }
    }
    y[m] = static_cast<float>(det);
  }
}

}  // namespace mt
