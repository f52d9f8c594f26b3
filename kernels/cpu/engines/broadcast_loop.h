// Elementwise loops over two numpy-broadcast operands in memory order, planned once: dims of
// size 1 dropped, dims merged while every operand stays contiguous across them, and the innermost
// dim specialised for "both contiguous" / "one operand repeated" so that the compiler vectorises.
#pragma once

#include <pthreadpool.h>

#include <cstdint>
#include <vector>

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
  static constexpr size_t kMaxDims = 16;
  struct Dim {
    int64_t size, a, b, out;  // strides in elements
  };
  std::vector<Dim> outer_;
  Dim inner_{1, 0, 0, 1};
  size_t rows_ = 1;
};

template <typename T, typename U, typename Fn>
void BroadcastLoop::run(const T* a, const T* b, U* out, const Fn& fn, pthreadpool_t pool) const {
  const int64_t n = inner_.size;
  const size_t min_rows = static_cast<size_t>(std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n)));
  parallel_chunks(pool, rows_, min_rows, [&](size_t begin, size_t end) {
    int64_t index[kMaxDims] = {};
    int64_t oa = 0, ob = 0, oo = 0;
    size_t rest = begin;
    for (size_t d = outer_.size(); d-- > 0;) {
      index[d] = static_cast<int64_t>(rest % static_cast<size_t>(outer_[d].size));
      rest /= static_cast<size_t>(outer_[d].size);
      oa += index[d] * outer_[d].a;
      ob += index[d] * outer_[d].b;
      oo += index[d] * outer_[d].out;
    }
    for (size_t row = begin; row < end; ++row) {
      const T* pa = a + oa;
      const T* pb = b + ob;
      U* po = out + oo;
      if (inner_.a == 1 && inner_.b == 1) {
        for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], pb[i]);
      } else if (inner_.a == 1) {
        const T vb = pb[0];
        for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], vb);
      } else if (inner_.b == 1) {
        const T va = pa[0];
        for (int64_t i = 0; i < n; ++i) po[i] = fn(va, pb[i]);
      } else {
        const U v = fn(pa[0], pb[0]);
        for (int64_t i = 0; i < n; ++i) po[i] = v;
      }
      for (size_t d = outer_.size(); d-- > 0;) {
        oa += outer_[d].a;
        ob += outer_[d].b;
        oo += outer_[d].out;
        if (++index[d] < outer_[d].size) break;
        oa -= outer_[d].size * outer_[d].a;
        ob -= outer_[d].size * outer_[d].b;
        oo -= outer_[d].size * outer_[d].out;
        index[d] = 0;
      }
    }
  });
}

}  // namespace mt::cpu
