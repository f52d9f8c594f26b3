// Portable elementwise kernels: fn applied to every element of input 0 (float32 by default, any
// storage type on request), in whatever layout the input has, split across the pool in contiguous chunks the compiler vectorises. The loop is
// compiled twice, for the x86-64 baseline and for AVX2+FMA, and picked by the CPU it runs on
// (XNNPACK dispatches the same way).
#pragma once

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/engines/vec_math.h"

namespace mt::cpu {

bool cpu_has_avx2_fma();

template <typename In, typename Out, typename Fn>
void map_baseline(const In* in, Out* out, size_t begin, size_t end, const Fn& fn) {
  for (size_t i = begin; i < end; ++i) out[i] = fn(in[i]);
}

#if defined(__x86_64__)
template <typename In, typename Out, typename Fn>
__attribute__((target("avx2,fma"))) void map_avx2(const In* in, Out* out, size_t begin, size_t end, const Fn& fn) {
  for (size_t i = begin; i < end; ++i) out[i] = fn(in[i]);
}
#endif

// y = fn(x) for every element, y in x's layout. Elements are float32 unless the caller names other
// storage types (integers, bool as uint8_t).
template <typename In = float, typename Out = In, typename Fn>
void plan_unary_map(NodeContext& c, Fn fn) {
  const Value x = c.input(0);
  const Value y = c.output(0, x.layout);
  const size_t n = count_of(x);
  const bool avx2 = c.avx2_fma();  // this CPU has AVX2 + FMA and MT_CPU_TARGET does not exclude them
  c.add_kernel({x, y}, [n, fn, avx2](Pointers p, ThreadPool* pool) {
    const auto* in = static_cast<const In*>(p[0]);
    auto* out = static_cast<Out*>(p[1]);
    parallel_chunks(pool, n, 16384, [&](size_t begin, size_t end) {
#if defined(__x86_64__)
      if (avx2) {
        map_avx2(in, out, begin, end, fn);
        return;
      }
#endif
      map_baseline(in, out, begin, end, fn);
    });
  });
}

}  // namespace mt::cpu
