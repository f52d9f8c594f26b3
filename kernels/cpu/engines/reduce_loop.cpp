#include "kernels/cpu/engines/reduce_loop.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

// How a kind combines its elements, and what it maps each element to first.
enum class Combine { sum, max, min, prod };
enum class Map { none, abs, square, exp_shifted };

float initial(Combine combine) {
  switch (combine) {
    case Combine::max: return -std::numeric_limits<float>::infinity();
    case Combine::min: return std::numeric_limits<float>::infinity();
    case Combine::prod: return 1.0f;
    default: return 0.0f;
  }
}

Combine combine_of(ReduceKind kind) {
  if (kind == ReduceKind::max) return Combine::max;
  if (kind == ReduceKind::min) return Combine::min;
  if (kind == ReduceKind::prod) return Combine::prod;
  return Combine::sum;
}

template <Map kMap>
float mapped(float x, [[maybe_unused]] float shift) {
  if constexpr (kMap == Map::abs) return std::fabs(x);
  else if constexpr (kMap == Map::square) return x * x;
  else if constexpr (kMap == Map::exp_shifted) return std::exp(x - shift);
  else return x;
}

template <Combine kCombine>
float combine(float a, float b) {
  if constexpr (kCombine == Combine::max) return a < b ? b : a;
  else if constexpr (kCombine == Combine::min) return b < a ? b : a;
  else if constexpr (kCombine == Combine::prod) return a * b;
  else return a + b;
}

// Reduces n contiguous floats with eight partial results, which the compiler keeps in vector
// registers (a single running sum would force sequential adds).
template <Combine kCombine, Map kMap>
float reduce_row(const float* x, int64_t n, float shift) {
  float acc[8];
  for (float& a : acc) a = initial(kCombine);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] = combine<kCombine>(acc[j], mapped<kMap>(x[i + j], shift));
  for (int j = 0; i < n; ++i, ++j) acc[j] = combine<kCombine>(acc[j], mapped<kMap>(x[i], shift));
  float result = acc[0];
  for (int j = 1; j < 8; ++j) result = combine<kCombine>(result, acc[j]);
  return result;
}

template <Combine kCombine, Map kMap>
void rows_kernel(const std::vector<LoopDim<2>>& outer, int64_t n, bool inner_reduced, const float* in, float* out,
                 const float* shift, size_t begin, size_t end) {
  StridedWalk<2> walk(outer, begin);
  for (size_t row = begin; row < end; ++row, walk.next()) {
    const float* x = in + walk[0];
    float* y = out + walk[1];
    const float* s = shift == nullptr ? nullptr : shift + walk[1];
    if (inner_reduced) {
      *y = combine<kCombine>(*y, reduce_row<kCombine, kMap>(x, n, s == nullptr ? 0.0f : *s));
    } else {
      for (int64_t i = 0; i < n; ++i) y[i] = combine<kCombine>(y[i], mapped<kMap>(x[i], s == nullptr ? 0.0f : s[i]));
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

void ReduceLoop::run_rows(ReduceKind kind, const float* in, float* out, const float* shift, size_t begin,
                          size_t end) const {
  const int64_t n = inner_.size;
  switch (kind) {
    case ReduceKind::max:
      rows_kernel<Combine::max, Map::none>(outer_, n, inner_reduced_, in, out, shift, begin, end);
      break;
    case ReduceKind::min:
      rows_kernel<Combine::min, Map::none>(outer_, n, inner_reduced_, in, out, shift, begin, end);
      break;
    case ReduceKind::l1:
      rows_kernel<Combine::sum, Map::abs>(outer_, n, inner_reduced_, in, out, shift, begin, end);
      break;
    case ReduceKind::l2:
    case ReduceKind::sum_square:
      rows_kernel<Combine::sum, Map::square>(outer_, n, inner_reduced_, in, out, shift, begin, end);
      break;
    case ReduceKind::prod:
      rows_kernel<Combine::prod, Map::none>(outer_, n, inner_reduced_, in, out, shift, begin, end);
      break;
    case ReduceKind::log_sum_exp:
      rows_kernel<Combine::sum, Map::exp_shifted>(outer_, n, inner_reduced_, in, out, shift, begin, end);
      break;
    default: rows_kernel<Combine::sum, Map::none>(outer_, n, inner_reduced_, in, out, shift, begin, end); break;
  }
}

void ReduceLoop::pass(ReduceKind kind, const float* in, float* out, const float* shift, ThreadPool* pool) const {
  std::fill(out, out + out_count_, initial(combine_of(kind)));
  if (rows_per_slice_ > 0) {
    const size_t slices = rows_ / rows_per_slice_;
    const size_t per = rows_per_slice_;
    const size_t work = per * static_cast<size_t>(inner_.size);
    parallel_chunks(pool, slices, std::max<size_t>(1, 16384 / std::max<size_t>(1, work)),
                    [&](size_t begin, size_t end) { run_rows(kind, in, out, shift, begin * per, end * per); });
  } else {
    run_rows(kind, in, out, shift, 0, rows_);
  }
}

void ReduceLoop::run(const float* in, float* out, float* scratch, ThreadPool* pool) const {
  // log_sum_exp: log(sum(exp(x - m))) + m with m each group's maximum (0 where it is not finite,
  // so that all -inf gives -inf and +inf gives +inf), as the reference kernel computes it.
  if (kind_ == ReduceKind::log_sum_exp) {
    pass(ReduceKind::max, in, scratch, nullptr, pool);
    for (size_t i = 0; i < out_count_; ++i)
      if (!std::isfinite(scratch[i])) scratch[i] = 0.0f;
  }
  pass(kind_, in, out, kind_ == ReduceKind::log_sum_exp ? scratch : nullptr, pool);
  switch (kind_) {
    case ReduceKind::mean: {
      const float scale = 1.0f / static_cast<float>(reduced_count_);
      for (size_t i = 0; i < out_count_; ++i) out[i] *= scale;
      break;
    }
    case ReduceKind::l2:
      for (size_t i = 0; i < out_count_; ++i) out[i] = std::sqrt(out[i]);
      break;
    case ReduceKind::log_sum:
      for (size_t i = 0; i < out_count_; ++i) out[i] = std::log(out[i]);
      break;
    case ReduceKind::log_sum_exp:
      for (size_t i = 0; i < out_count_; ++i) out[i] = std::log(out[i]) + scratch[i];
      break;
    default: break;
  }
}

}  // namespace mt::cpu
