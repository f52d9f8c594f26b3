#include "kernels/cpu/engines/reduce_loop.h"

#include <algorithm>
#include <limits>

#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

float initial(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::max: return -std::numeric_limits<float>::infinity();
    case ReduceKind::min: return std::numeric_limits<float>::infinity();
    default: return 0.0f;
  }
}

// Reduces n contiguous floats with eight partial results, which the compiler keeps in vector
// registers (a single running sum would force sequential adds).
template <ReduceKind kKind>
float reduce_row(const float* x, int64_t n) {
  float acc[8];
  for (float& a : acc) a = initial(kKind);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) {
      if constexpr (kKind == ReduceKind::max) acc[j] = acc[j] < x[i + j] ? x[i + j] : acc[j];
      else if constexpr (kKind == ReduceKind::min) acc[j] = x[i + j] < acc[j] ? x[i + j] : acc[j];
      else acc[j] += x[i + j];
    }
  }
  for (int j = 0; i < n; ++i, ++j) {
    if constexpr (kKind == ReduceKind::max) acc[j] = acc[j] < x[i] ? x[i] : acc[j];
    else if constexpr (kKind == ReduceKind::min) acc[j] = x[i] < acc[j] ? x[i] : acc[j];
    else acc[j] += x[i];
  }
  float result = acc[0];
  for (int j = 1; j < 8; ++j) {
    if constexpr (kKind == ReduceKind::max) result = result < acc[j] ? acc[j] : result;
    else if constexpr (kKind == ReduceKind::min) result = acc[j] < result ? acc[j] : result;
    else result += acc[j];
  }
  return result;
}

template <ReduceKind kKind>
float combine(float a, float b) {
  if constexpr (kKind == ReduceKind::max) return a < b ? b : a;
  else if constexpr (kKind == ReduceKind::min) return b < a ? b : a;
  else return a + b;
}

template <ReduceKind kKind>
void rows_kernel(const std::vector<LoopDim<2>>& outer, int64_t n, bool inner_reduced, const float* in, float* out,
                 size_t begin, size_t end) {
  StridedWalk<2> walk(outer, begin);
  for (size_t row = begin; row < end; ++row, walk.next()) {
    const float* x = in + walk[0];
    float* y = out + walk[1];
    if (inner_reduced) {
      *y = combine<kKind>(*y, reduce_row<kKind>(x, n));
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = combine<kKind>(y[i], x[i]);
    }
  }
}

}  // namespace

ReduceLoop::ReduceLoop(const Shape& physical, const std::vector<bool>& reduced, ReduceKind kind) : kind_(kind) {
  int64_t in_stride = 1;
  std::vector<int64_t> in_strides(physical.size()), out_strides(physical.size());
  int64_t out_stride = 1;
  for (size_t k = physical.size(); k-- > 0;) {
    in_strides[k] = in_stride;
    in_stride *= physical[k];
    out_strides[k] = reduced[k] ? 0 : out_stride;
    if (!reduced[k]) out_stride *= physical[k];
    if (reduced[k]) reduced_count_ *= physical[k];
  }
  out_count_ = static_cast<size_t>(out_stride);
  // Runs of adjacent kept (or reduced) dims merge: dims of one kind stay contiguous in the input
  // and (kept) in the output across size-1 dims.
  std::vector<Dim> dims;
  std::vector<bool> dim_reduced;
  for (size_t k = 0; k < physical.size(); ++k) {
    if (physical[k] == 1) continue;
    if (!dims.empty() && dim_reduced.back() == reduced[k]) {
      dims.back() = {dims.back().size * physical[k], {in_strides[k], out_strides[k]}};
      continue;
    }
    dims.push_back({physical[k], {in_strides[k], out_strides[k]}});
    dim_reduced.push_back(reduced[k]);
  }
  if (dims.empty()) return;
  inner_ = dims.back();
  inner_reduced_ = dim_reduced.back();
  dims.pop_back();
  check_loop_depth(dims, "reduction");
  for (const Dim& dim : dims) rows_ *= static_cast<size_t>(dim.size);
  // Threads may split the rows only along a kept outermost dim: their outputs are then disjoint.
  if (rows_ > 0 && !dims.empty() && !dim_reduced.front())
    rows_per_slice_ = rows_ / static_cast<size_t>(dims.front().size);
  outer_ = std::move(dims);
}

void ReduceLoop::run_rows(const float* in, float* out, size_t begin, size_t end) const {
  switch (kind_) {
    case ReduceKind::max: rows_kernel<ReduceKind::max>(outer_, inner_.size, inner_reduced_, in, out, begin, end); break;
    case ReduceKind::min: rows_kernel<ReduceKind::min>(outer_, inner_.size, inner_reduced_, in, out, begin, end); break;
    default: rows_kernel<ReduceKind::sum>(outer_, inner_.size, inner_reduced_, in, out, begin, end); break;
  }
}

void ReduceLoop::run(const float* in, float* out, pthreadpool_t pool) const {
  std::fill(out, out + out_count_, initial(kind_));
  if (rows_per_slice_ > 0) {
    const size_t slices = rows_ / rows_per_slice_;
    const size_t per = rows_per_slice_;
    const size_t work = per * static_cast<size_t>(inner_.size);
    parallel_chunks(pool, slices, std::max<size_t>(1, 16384 / std::max<size_t>(1, work)),
                    [&](size_t begin, size_t end) { run_rows(in, out, begin * per, end * per); });
  } else {
    run_rows(in, out, 0, rows_);
  }
  if (kind_ == ReduceKind::mean) {
    const float scale = 1.0f / static_cast<float>(reduced_count_);
    for (size_t i = 0; i < out_count_; ++i) out[i] *= scale;
  }
}

}  // namespace mt::cpu
