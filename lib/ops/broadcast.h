// Numpy-style broadcasting, shared by shape inference, the reference kernels and the backends.
#pragma once

#include <optional>

#include "lib/ir/shape.h"

namespace mt {

// The broadcast shape of a and b (numpy rules), or nullopt if they are incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Row-major strides of `shape` as seen from a broadcast `out` shape: 0 along broadcast dims.
// `shape` must broadcast to `out`.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out);

}  // namespace mt
