#include "lib/ops/non_max_suppression.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

namespace mt {
namespace {

// A box as its extent on each axis: min <= max whatever order the corners came in.
struct Extent {
  float y_min, x_min, y_max, x_max;
  float area() const { return (y_max - y_min) * (x_max - x_min); }
};

Extent extent(const float* box, bool center_point_box) {
  if (center_point_box) {
    const float half_w = box[2] / 2, half_h = box[3] / 2;
    return {box[1] - half_h, box[0] - half_w, box[1] + half_h, box[0] + half_w};
  }
  return {std::min(box[0], box[2]), std::min(box[1], box[3]), std::max(box[0], box[2]), std::max(box[1], box[3])};
}

// Whether `b` overlaps the kept box `a` by more than `threshold` (intersection over union). Boxes of
// no area, and boxes that do not meet, never suppress.
bool suppresses(const Extent& a, const Extent& b, float threshold) {
  const float height = std::min(a.y_max, b.y_max) - std::max(a.y_min, b.y_min);
  const float width = std::min(a.x_max, b.x_max) - std::max(a.x_min, b.x_min);
  if (height <= 0 || width <= 0) return false;
  const float intersection = height * width;
  const float area_a = a.area(), area_b = b.area();
  const float union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > threshold;
}

}  // namespace

int64_t nms_capacity(const NmsParams& params) {
  return params.batches * params.classes * std::min(params.max_per_class, params.boxes);
}

size_t nms_scratch_bytes(const NmsParams& params) {
  // The candidate indices of one class, then the extents of the boxes kept so far.
  return static_cast<size_t>(params.boxes) * sizeof(int64_t) +
         static_cast<size_t>(std::min(params.max_per_class, params.boxes)) * sizeof(Extent);
}

int64_t non_max_suppression(const NmsParams& params, const float* boxes, const float* scores, float iou_threshold,
                            std::optional<float> score_threshold, int64_t* selected, void* scratch) {
  const int64_t n = params.boxes;
  const int64_t limit = std::min(params.max_per_class, n);
  auto* candidates = static_cast<int64_t*>(scratch);
  auto* kept = reinterpret_cast<Extent*>(static_cast<std::byte*>(scratch) + static_cast<size_t>(n) * sizeof(int64_t));
  int64_t count = 0;
  for (int64_t b = 0; b < params.batches && limit > 0; ++b) {
    const float* batch_boxes = boxes + b * n * 4;
    for (int64_t c = 0; c < params.classes; ++c) {
      const float* s = scores + (b * params.classes + c) * n;
      int64_t m = 0;
      for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(s[i]) && (!score_threshold || s[i] > *score_threshold)) candidates[m++] = i;
      // Best score first, the lower index first among equal scores: a strict total order (no NaN).
      std::sort(candidates, candidates + m,
                [s](int64_t i, int64_t j) { return s[i] > s[j] || (s[i] == s[j] && i < j); });
      int64_t kept_count = 0;
      for (int64_t k = 0; k < m && kept_count < limit; ++k) {
        const Extent box = extent(batch_boxes + candidates[k] * 4, params.center_point_box);
        bool keep = true;
        for (int64_t j = 0; j < kept_count && keep; ++j) keep = !suppresses(kept[j], box, iou_threshold);
        if (!keep) continue;
        kept[kept_count++] = box;
        const std::array<int64_t, 3> row{b, c, candidates[k]};
        std::memcpy(selected + 3 * count++, row.data(), sizeof(row));
      }
    }
  }
  std::fill(selected + 3 * count, selected + 3 * nms_capacity(params), int64_t{0});
  return count;
}

}  // namespace mt
