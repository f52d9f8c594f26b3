// ONNX Slice resolution: turns the starts/ends/axes/steps attributes of a slice node into
// one (start, step, count) per input axis, shared by shape inference, kernels and backends.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/ir/graph.h"

namespace mt {

// The elements taken along one axis: start, start + step, ... (count of them).
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// One SliceAxis per axis of `input` (axes the node does not name are taken whole), following
// ONNX Slice: negative starts/ends count from the end, then are clamped ([0, dim] for positive
// steps, [-1, dim - 1] for negative ones), so INT64_MAX / INT64_MIN mean "to the end".
// Throws Error(invalid_input), without naming the node, if the attribute lists disagree in
// length, an axis is out of range or repeated, or a step is 0.
std::vector<SliceAxis> resolve_slice(const Node& node, const Shape& input);

}  // namespace mt
