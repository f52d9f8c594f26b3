// A tensor copied into another dimension order (transpose / layout change), planned once:
// dims of size 1 dropped, dims that stay adjacent merged, then either contiguous row copies or
// cache-blocked 2-D transposes, split across the thread pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu/engines/strided_walk.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "lib/ir/shape.h"

namespace mt::cpu {

class Permute {
 public:
  Permute() = default;
  // `source_shape`: the source's dims in memory order. Destination dim k is source dim perm[k].
  Permute(const Shape& source_shape, const std::vector<int>& perm, size_t element_size);

  void run(const void* source, void* destination, ThreadPool* pool) const;
  size_t bytes() const { return count_ * element_size_; }

 private:
  using Dim = LoopDim<2>;  // strides of source, destination
  static constexpr size_t kSource = 0, kDestination = 1;
  void copy_rows(const std::byte* source, std::byte* destination, size_t begin, size_t end) const;
  void transpose_tiles(const std::byte* source, std::byte* destination, size_t begin, size_t end) const;

  size_t element_size_ = 4;
  int64_t count_ = 0;
  std::vector<Dim> outer_;     // loop dims outside the innermost kernel, outermost first
  Dim inner_{1, {1, 1}};       // destination's innermost dim
  Dim transposed_{1, {1, 1}};  // the source's innermost dim when it is not the destination's (a 2-D tile)
  bool transpose_ = false;
  int64_t tile_ = 1;   // elements of `transposed_` per work unit
  int64_t tiles_ = 1;  // work units per outer index in transpose mode
};

}  // namespace mt::cpu
