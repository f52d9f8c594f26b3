// ONNX MaxPool's second output (Indices): for each window of max_pool2d, where its maximum is, as an
// index into the input flattened in NCHW order, each H x W plane row-major (storage_order 0) or
// column-major (1: w * H + h). The reference kernel and the cpu
// backend both run this loop, so they agree exactly.
#pragma once

#include <cstdint>

#include "lib/ir/shape.h"
#include "lib/ops/conv_geometry.h"

namespace mt {

// `input` and `output` are the NCHW shapes of max_pool2d's input and output. Each window gives the
// first position holding its maximum, in row-major order of the window (NaN, which max_pool2d
// returns when a window holds one, counts as the largest value); padding is never a position.
void max_pool2d_indices(const Window2d& window, const Shape& input, const Shape& output, bool column_major,
                        const float* x, int64_t* indices);

}  // namespace mt
