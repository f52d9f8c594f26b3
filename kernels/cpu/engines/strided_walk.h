// The strided index walk that every cpu loop over tensors in memory order shares (broadcast,
// reduce, permute, slice): the loop dims outside an innermost kernel, each with one stride per
// operand, and an odometer that steps through a range of outer indices adding strides (no
// division per step). Only offsets are computed here, so a kernel's float evaluation order is
// its own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/core/error.h"

namespace mt::cpu {

// Loop nests deeper than this are refused at planning (dims of size 1 are dropped and runs that
// stay contiguous merged first, so real tensors never come near it).
inline constexpr size_t kMaxLoopDims = 16;

// One loop dim: its size and each operand's stride in elements (0 for a repeated operand).
template <size_t kOperands>
struct LoopDim {
  int64_t size = 1;
  std::array<int64_t, kOperands> stride{};
};

// Appends `dim` to `dims`, dropping it when its size is 1 and merging it into the last dim when
// every operand stays contiguous across the two (the last dim's stride is `dim`'s times its size).
template <size_t kOperands>
void append_merged(std::vector<LoopDim<kOperands>>& dims, const LoopDim<kOperands>& dim) {
  if (dim.size == 1) return;
  if (!dims.empty()) {
    LoopDim<kOperands>& last = dims.back();
    bool contiguous = true;
    for (size_t k = 0; k < kOperands; ++k) contiguous = contiguous && last.stride[k] == dim.stride[k] * dim.size;
    if (contiguous) {
      last = {last.size * dim.size, dim.stride};
      return;
    }
  }
  dims.push_back(dim);
}

// Refuses loop nests deeper than the walker's index array; `what` names the op for the message.
template <size_t kOperands>
void check_loop_depth(const std::vector<LoopDim<kOperands>>& dims, std::string_view what) {
  if (dims.size() > kMaxLoopDims) unsupported("{} over {} interleaved dimensions is not supported", what, dims.size());
}

// Walks the offsets of outer indices start, start + 1, ... of `dims` (outermost first).
template <size_t kOperands>
class StridedWalk {
 public:
  // Offsets start at `base` (e.g. a slice's first element) plus those of outer index `start`.
  StridedWalk(const std::vector<LoopDim<kOperands>>& dims, size_t start,
              const std::array<int64_t, kOperands>& base = {})
      : dims_(dims), offset_(base) {
    for (size_t d = dims_.size(); d-- > 0;) {
      const auto size = static_cast<size_t>(dims_[d].size);
      index_[d] = static_cast<int64_t>(start % size);
      start /= size;
      for (size_t k = 0; k < kOperands; ++k) offset_[k] += index_[d] * dims_[d].stride[k];
    }
  }

  // Operand k's offset in elements at the current outer index.
  int64_t operator[](size_t k) const { return offset_[k]; }

  // Steps to the next outer index (innermost outer dim fastest).
  void next() {
    for (size_t d = dims_.size(); d-- > 0;) {
      for (size_t k = 0; k < kOperands; ++k) offset_[k] += dims_[d].stride[k];
      if (++index_[d] < dims_[d].size) return;
      for (size_t k = 0; k < kOperands; ++k) offset_[k] -= dims_[d].size * dims_[d].stride[k];
      index_[d] = 0;
    }
  }

 private:
  const std::vector<LoopDim<kOperands>>& dims_;
  int64_t index_[kMaxLoopDims] = {};
  std::array<int64_t, kOperands> offset_;
};

}  // namespace mt::cpu
