// Reductions (sum, mean, max, min, l1, l2, sum of squares, log of the sum, log-sum-exp, product) over any
// set of dims of a tensor in memory order, planned once: dims merged into alternating
// kept/reduced runs, then either contiguous row reductions (innermost dim reduced) or vector
// accumulation of rows (innermost dim kept). Each kind is a sum, max or min of mapped elements
// (|x|, x^2, exp(x - m)), or a product, with a final step (mean's scale, sqrt, log).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/engines/strided_walk.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "lib/ir/shape.h"

namespace mt::cpu {

enum class ReduceKind { sum, mean, max, min, l1, l2, sum_square, log_sum, log_sum_exp, prod };

class ReduceLoop {
 public:
  ReduceLoop() = default;
  // `physical`: the input's dims in memory order; `reduced[k]` marks the dims reduced away. The
  // output holds the kept dims in the same order.
  ReduceLoop(const Shape& physical, const std::vector<bool>& reduced, ReduceKind kind);
  // Floats of scratch memory run() needs (log_sum_exp keeps each group's maximum there), or 0.
  size_t scratch_floats() const { return kind_ == ReduceKind::log_sum_exp ? out_count_ : 0; }
  void run(const float* in, float* out, float* scratch, ThreadPool* pool) const;

 private:
  using Dim = LoopDim<2>;  // strides of in, out (0 for reduced dims)
  // One pass: out = combine over the reduced dims of map(in) (`kind` decides both), with the
  // log_sum_exp shift read from `shift`, laid out as out.
  void pass(ReduceKind kind, const float* in, float* out, const float* shift, ThreadPool* pool) const;
  void run_rows(ReduceKind kind, const float* in, float* out, const float* shift, size_t begin, size_t end) const;

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
