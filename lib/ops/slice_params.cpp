#include "lib/ops/slice_params.h"

#include <algorithm>

#include "lib/ops/registry.h"

namespace mt {
namespace {

// Number of indices start, start + step, ... that lie before `end` (after `end` for negative
// steps). Computed on magnitudes in uint64 so that no step, INT64_MIN included, can overflow.
int64_t slice_count(int64_t start, int64_t end, int64_t step) {
  if (step > 0 ? end <= start : start <= end) return 0;
  const auto distance = static_cast<uint64_t>(step > 0 ? end - start : start - end);
  const uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : uint64_t{0} - static_cast<uint64_t>(step);
  return static_cast<int64_t>((distance - 1) / magnitude + 1);
}

}  // namespace

std::vector<SliceAxis> resolve_slice(const Node& node, const Shape& input) {
  const auto& starts = attr_ints(node, "starts");
  const auto& ends = attr_ints(node, "ends");
  const auto& axes_attr = attr_ints(node, "axes");
  const auto& steps = attr_ints(node, "steps");
  const size_t rank = input.size();
  if (starts.size() != ends.size()) invalid_input("starts has {} values but ends has {}", starts.size(), ends.size());
  if (!axes_attr.empty() && axes_attr.size() != starts.size())
    invalid_input("axes has {} values but starts has {}", axes_attr.size(), starts.size());
  if (!steps.empty() && steps.size() != starts.size())
    invalid_input("steps has {} values but starts has {}", steps.size(), starts.size());
  if (axes_attr.empty() && starts.size() > rank)
    invalid_input("{} starts given for an input of rank {}", starts.size(), rank);

  std::vector<SliceAxis> result(rank);
  for (size_t i = 0; i < rank; ++i) result[i] = {0, 1, input[i]};
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t axis_value = axes_attr.empty() ? static_cast<int64_t>(i) : axes_attr[i];
    const auto axis = normalize_axis(axis_value, rank);
    if (!axis) invalid_input("axis {} is out of range for rank {}", axis_value, rank);
    if (seen[*axis]) invalid_input("axis {} is sliced twice", axis_value);
    seen[*axis] = true;
    const int64_t step = steps.empty() ? 1 : steps[i];
    if (step == 0) invalid_input("step of axis {} is 0", axis_value);

    const int64_t dim = input[*axis];
    if (dim == 0) {
      result[*axis] = {0, 1, 0};
      continue;
    }
    // dim >= 0, so adding it to a negative value cannot overflow.
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    const int64_t count = slice_count(start, end, step);
    // With fewer than two elements the step is irrelevant; normalising it to 1 keeps
    // start + (count - 1) * step (and strides derived from it) far from overflow.
    result[*axis] = {count > 0 ? start : 0, count > 1 ? step : 1, count};
  }
  return result;
}

}  // namespace mt
