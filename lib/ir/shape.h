// Tensor shapes: a list of non-negative dimensions, with overflow-checked element counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mt {

using Shape = std::vector<int64_t>;

// Largest element count mt accepts for one tensor (2^40): bounds every size computed from
// untrusted dimensions before anything is allocated.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

// Number of elements, or nullopt if a dimension is negative or the product exceeds kMaxElements.
std::optional<int64_t> checked_numel(const Shape& shape);

// Number of elements of a shape already validated (by checked_numel or by the model reader).
int64_t numel(const Shape& shape);

// "1x3x224x224"; "scalar" for rank 0.
std::string shape_str(const Shape& shape);

// Normalises a possibly negative axis against a rank; nullopt if out of range.
std::optional<int> normalize_axis(int64_t axis, size_t rank);

}  // namespace mt
