// Splitting a portable kernel's work across the plan's thread pool: fn(begin, end) over [0, count)
// in a few chunks per thread, or one direct call when there is no pool or too little work.
#pragma once

#include <algorithm>
#include <cstddef>

#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Work a fused step does on output pixels [begin, end) once its thread has computed them (ShuffleNet's
// channel shuffle after the conv that computes its last input); fn null: none.
struct PixelRangeTail {
  void (*fn)(const void* context, size_t begin, size_t end) = nullptr;
  const void* context = nullptr;
  void operator()(size_t begin, size_t end) const {
    if (fn != nullptr) fn(context, begin, end);
  }
};

template <typename Fn>
void parallel_chunks(ThreadPool* pool, size_t count, size_t min_chunk, const Fn& fn) {
  const size_t threads = thread_count(pool);
  if (threads <= 1 || count <= min_chunk) {
    if (count > 0) fn(size_t{0}, count);
    return;
  }
  // About four chunks per thread balances uneven chunks without much scheduling cost. Fewer where
  // min_chunk says the work is small, but then a multiple of the threads of equal size: 784 rows
  // with min_chunk 565 ran as 565 + 219, one thread doing 72% of the work.
  const size_t largest = std::max(min_chunk, (count + threads * 4 - 1) / (threads * 4));
  size_t chunks = (count + largest - 1) / largest;
  chunks = std::min(count, (chunks + threads - 1) / threads * threads);
  const size_t chunk = (count + chunks - 1) / chunks;
  struct Context {
    const Fn* fn;
    size_t count, chunk;
  } context{&fn, count, chunk};
  parallelize(
      pool,
      [](void* raw, size_t index) {
        const auto* c = static_cast<const Context*>(raw);
        const size_t begin = index * c->chunk;
        (*c->fn)(begin, std::min(c->count, begin + c->chunk));
      },
      &context, (count + chunk - 1) / chunk);
}

}  // namespace mt::cpu
