// Reductions (sum, mean, max, min) over any set of dims of a tensor in memory order, planned
// once: dims merged into alternating kept/reduced runs, then either contiguous row reductions
// (innermost dim reduced) or vector accumulation of rows (innermost dim kept).
#pragma once

#include <pthreadpool.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/engines/strided_walk.h"
#include "lib/ir/shape.h"

namespace mt::cpu {

enum class ReduceKind { sum, mean, max, min };

class ReduceLoop {
 public:
  ReduceLoop() = default;
  // `physical`: the input's dims in memory order; `reduced[k]` marks the dims reduced away. The
  // output holds the kept dims in the same order.
  ReduceLoop(const Shape& physical, const std::vector<bool>& reduced, ReduceKind kind);
  void run(const float* in, float* out, pthreadpool_t pool) const;

 private:
  using Dim = LoopDim<2>;  // strides of in, out (0 for reduced dims)
  void run_rows(const float* in, float* out, size_t begin, size_t end) const;

  ReduceKind kind_ = ReduceKind::sum;
  std::vector<Dim> outer_;
  Dim inner_{1, {1, 1}};
  bool inner_reduced_ = false;
  size_t rows_ = 1;
  size_t out_count_ = 1;
  int64_t reduced_count_ = 1;
  size_t rows_per_slice_ = 0;  // > 0: rows split by the outermost (kept) dim across threads
};

}  // namespace mt::cpu
