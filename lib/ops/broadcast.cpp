#include "lib/ops/broadcast.h"

#include <algorithm>

namespace mt {

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    const size_t o = i + (out.size() - shape.size());
    strides[o] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

}  // namespace mt
