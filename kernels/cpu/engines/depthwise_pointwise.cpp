#include "kernels/cpu/engines/depthwise_pointwise.h"

#include <algorithm>

namespace mt::cpu {

void depthwise_pointwise(const DepthwisePointwise& f, const PackedConvShape& s, const float* x, float* mid, float* y,
                         const float* residual, const PixelRangeTail& tail, ThreadPool* pool) {
  const size_t rows = s.n * s.out_h;
  if (rows == 0) return;
  // Contiguous ranges of rows, one per thread: a range is the unit of both convs (7-row layers
  // split 4 : 3 on 2 threads).
  const size_t parts = std::max<size_t>(1, std::min(rows, thread_count(pool)));
  const size_t mid_row = s.out_w * s.channels, out_row = s.out_w * f.pointwise.n;
  auto run = [&](size_t part) {
    const size_t begin = rows * part / parts, end = rows * (part + 1) / parts;
    if (begin >= end) return;
    depthwise_conv_rows(f.depthwise, s, x, mid, f.depthwise_epilogue, begin, end);
    Epilogue e = f.pointwise_epilogue;
    if (residual != nullptr) e.residual = residual + begin * out_row;
    packed_gemm(f.pointwise, (end - begin) * s.out_w, mid + begin * mid_row, s.channels, y + begin * out_row,
                f.pointwise.n, e, nullptr);
    tail(begin * s.out_w, end * s.out_w);
  };
  if (parts == 1) return run(0);
  using Run = decltype(run);
  parallelize(
      pool, [](void* context, size_t part) { (*static_cast<Run*>(context))(part); }, &run, parts);
}

}  // namespace mt::cpu
