// Portable elementwise kernels: fn applied to every element of input 0, in whatever layout the
// input has, split across the pool in contiguous chunks the compiler vectorises.
#pragma once

#include "kernels/cpu/op_util.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/vec_math.h"

namespace mt::cpu {

template <typename Fn>
void plan_unary_map(NodeContext& c, Fn fn) {
  const Value x = c.input(0);
  const Value y = c.output(0, x.layout);
  const size_t n = count_of(x);
  c.add_kernel({x, y}, [n, fn](Pointers p, pthreadpool_t pool) {
    const auto* in = static_cast<const float*>(p[0]);
    auto* out = static_cast<float*>(p[1]);
    parallel_chunks(pool, n, 16384, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) out[i] = fn(in[i]);
    });
  });
}

}  // namespace mt::cpu
