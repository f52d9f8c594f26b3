// Elementwise loops over numpy-broadcast operands in memory order, planned once: dims of size 1
// dropped, dims merged while every operand stays contiguous across them, and (two operands) the
// innermost dim specialised for "both contiguous" / "one operand repeated" so that the compiler
// vectorises. SelectLoop is where's three-operand form.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cpu/engines/strided_walk.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "lib/ir/shape.h"

#if defined(__x86_64__)
// GCC vectorises AVX-512 code 256 bits wide unless told otherwise; clang takes no such option here.
#if defined(__clang__)
#define MT_BROADCAST_AVX512 __attribute__((target("avx512f"), flatten))
#else
#define MT_BROADCAST_AVX512 __attribute__((target("avx512f,prefer-vector-width=512"), flatten))
#endif
#endif

namespace mt::cpu {

class BroadcastLoop {
 public:
  BroadcastLoop() = default;
  // Physical shapes of the same rank; a and b broadcast to out.
  BroadcastLoop(const Shape& out, const Shape& a, const Shape& b);

  // The instructions the rows are compiled for: the x86-64 baseline, AVX2 + FMA, or AVX-512F (512-bit
  // vectors), as the caller found the CPU to have them.
  enum class Isa { baseline, avx2, avx512 };

  // out[i] = fn(a[i'], b[i'']) for every output element.
  template <typename T, typename U, typename Fn>
  void run(const T* a, const T* b, U* out, const Fn& fn, ThreadPool* pool, Isa isa = Isa::baseline) const;

 private:
  template <typename T, typename U, typename Fn>
  void rows(const T* a, const T* b, U* out, const Fn& fn, size_t begin, size_t end) const;
#if defined(__x86_64__)
  // rows() with everything it calls inlined (flatten) and compiled for AVX2 + FMA, or AVX-512F.
  template <typename T, typename U, typename Fn>
  __attribute__((target("avx2,fma"), flatten)) void rows_avx2(const T* a, const T* b, U* out, const Fn& fn,
                                                              size_t begin, size_t end) const {
    rows(a, b, out, fn, begin, end);
  }
  template <typename T, typename U, typename Fn>
  MT_BROADCAST_AVX512 void rows_avx512(const T* a, const T* b, U* out, const Fn& fn, size_t begin, size_t end) const {
    rows(a, b, out, fn, begin, end);
  }
#endif

  using Dim = LoopDim<3>;  // strides of a, b, out
  std::vector<Dim> outer_;
  Dim inner_{1, {0, 0, 1}};
  size_t rows_ = 1;
};

template <typename T, typename U, typename Fn>
void BroadcastLoop::run(const T* a, const T* b, U* out, const Fn& fn, ThreadPool* pool, Isa isa) const {
  const int64_t n = inner_.size;
  const size_t min_rows = static_cast<size_t>(std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n)));
  parallel_chunks(pool, rows_, min_rows, [&](size_t begin, size_t end) {
#if defined(__x86_64__)
    if (isa == Isa::avx512) return rows_avx512(a, b, out, fn, begin, end);
    if (isa == Isa::avx2) return rows_avx2(a, b, out, fn, begin, end);
#else
    (void)isa;
#endif
    rows(a, b, out, fn, begin, end);
  });
}

template <typename T, typename U, typename Fn>
void BroadcastLoop::rows(const T* a, const T* b, U* out, const Fn& fn, size_t begin, size_t end) const {
  const int64_t n = inner_.size;
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
}

// where's loop: out = condition ? x : y, element by element over three broadcast operands, the
// same merged dims as BroadcastLoop (the condition is bytes, 0 or not).
class SelectLoop {
 public:
  SelectLoop() = default;
  // Physical shapes of the same rank; condition, x and y broadcast to out.
  SelectLoop(const Shape& out, const Shape& condition, const Shape& x, const Shape& y);

  template <typename T>
  void run(const uint8_t* condition, const T* x, const T* y, T* out, ThreadPool* pool) const;

 private:
  using Dim = LoopDim<4>;  // strides of condition, x, y, out
  std::vector<Dim> outer_;
  Dim inner_{1, {0, 0, 0, 1}};
  size_t rows_ = 1;
};

template <typename T>
void SelectLoop::run(const uint8_t* condition, const T* x, const T* y, T* out, ThreadPool* pool) const {
  const int64_t n = inner_.size;
  const int64_t sc = inner_.stride[0], sx = inner_.stride[1], sy = inner_.stride[2];
  const size_t min_rows = static_cast<size_t>(std::max<int64_t>(1, 8192 / std::max<int64_t>(1, n)));
  parallel_chunks(pool, rows_, min_rows, [&](size_t begin, size_t end) {
    StridedWalk<4> walk(outer_, begin);
    for (size_t row = begin; row < end; ++row, walk.next()) {
      const uint8_t* pc = condition + walk[0];
      const T* px = x + walk[1];
      const T* py = y + walk[2];
      T* po = out + walk[3];
      for (int64_t i = 0; i < n; ++i) po[i] = pc[i * sc] != 0 ? px[i * sx] : py[i * sy];
    }
  });
}

}  // namespace mt::cpu
