// non_max_suppression (ONNX's NonMaxSuppression) over row-major float32 boxes [B, N, 4] and scores
// [B, C, N]: per batch and class, the boxes whose score is above the threshold, best first (ties:
// the lower index), each kept unless it overlaps one kept before by more than the IoU threshold, at
// most max_per_class of them. The reference kernel and the cpu backend both run this loop, so they
// agree exactly.
//
// How many boxes survive depends on the data, and mt plans static shapes: the selected rows
// (batch, class, box) are written at the start of an output planned at its largest size,
// nms_capacity() rows, the rest zero (a valid index, so that a Gather by them stays in range), and
// the count is the op's second output (lib/ops/valid_rows.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "lib/ir/shape.h"

namespace mt {

struct NmsParams {
  int64_t batches = 0, classes = 0, boxes = 0;
  int64_t max_per_class = 0;      // at most this many boxes per batch and class (>= 0)
  bool center_point_box = false;  // boxes as (x center, y center, width, height), else two corners
};

// The largest number of selected rows: batches * classes * min(max_per_class, boxes).
int64_t nms_capacity(const NmsParams& params);
// Scratch bytes non_max_suppression() needs (the candidates of one class and the kept boxes).
size_t nms_scratch_bytes(const NmsParams& params);

// Writes nms_capacity() rows of three int64 to `selected` (the kept boxes first, then zeros) and
// returns how many were kept. A box whose score is NaN is never kept; one of zero or negative area
// suppresses nothing and is suppressed by nothing. `scratch` holds nms_scratch_bytes() bytes,
// aligned for int64.
int64_t non_max_suppression(const NmsParams& params, const float* boxes, const float* scores, float iou_threshold,
                            std::optional<float> score_threshold, int64_t* selected, void* scratch);

}  // namespace mt
