#include "lib/ir/shape.h"

#include <fmt/format.h>

namespace mt {

std::optional<int64_t> checked_numel(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || dim > kMaxElements) return std::nullopt;
    if (dim != 0 && count > kMaxElements / dim) return std::nullopt;
    count *= dim;
  }
  return count;
}

int64_t numel(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "scalar";
  return fmt::format("{}", fmt::join(shape, "x"));
}

std::optional<int> normalize_axis(int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

}  // namespace mt
