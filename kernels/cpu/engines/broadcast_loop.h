// Elementwise loops over two numpy-broadcast operands in memory order, planned once: dims of
// size 1 dropped, dims merged while every operand stays contiguous across them, and the innermost
// dim specialised for "both contiguous" / "one operand repeated" so that the compiler vectorises.
#pragma once

#include <pthreadpool.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/engines/strided_walk.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ir/shape.h"

namespace mt::cpu {

class BroadcastLoop {
 public:
  BroadcastLoop() = default;
  // Physical shapes of the same rank; a and b broadcast to out.
  BroadcastLoop(const Shape& out, const Shape& a, const Shape& b);

  // out[i] = fn(a[i'], b[i'']) for every output element.
  template <typename T, typename U, typename Fn>
  void run(const T* a, const T* b, U* out, const Fn& fn, pthreadpool_t pool) const;

 private:
  using Dim = LoopDim<3>;  // strides of a, b, out
  std::vector<Dim> outer_;
  Dim inner_{1, {0, 0, 1}};
  size_t rows_ = 1;
};

template <typename T, typename U, typename Fn>
void BroadcastLoop::run(const T* a, const T* b, U* out, const Fn& fn, pthreadpool_t pool) const {
  const int64_t n = inner_.size;
  const size_t min_rows = static_cast<size_t>(std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n)));
  parallel_chunks(pool, rows_, min_rows, [&](size_t begin, size_t end) {
    StridedWalk<3> walk(outer_, begin);
    for (size_t row = begin; row < end; ++row, walk.next()) {
      const T* pa = a + walk[0];
      const T* pb = b + walk[1];
      U* po = out + walk[2];
      if (inner_.stride[0] == 1 && inner_.stride[1] == 1) {
        for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], pb[i]);
      } else if (inner_.stride[0] == 1) {
        const T vb = pb[0];
        for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], vb);
      } else if (inner_.stride[1] == 1) {
        const T va = pa[0];
        for (int64_t i = 0; i < n; ++i) po[i] = fn(va, pb[i]);
      } else {
        const U v = fn(pa[0], pb[0]);
        for (int64_t i = 0; i < n; ++i) po[i] = v;
      }
    }
  });
}

}  // namespace mt::cpu
