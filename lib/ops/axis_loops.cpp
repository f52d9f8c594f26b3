#include "lib/ops/axis_loops.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

namespace mt {

AxisView axis_view(const Shape& shape, size_t axis) {
  AxisView view;
  for (size_t d = 0; d < axis; ++d) view.outer *= shape[d];
  view.n = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) view.inner *= shape[d];
  return view;
}

namespace {

// Whether `candidate` replaces the current best: a NaN best is final, a NaN candidate wins
// (the first NaN), otherwise strict comparison (the first of equal values) unless `last`.
bool better(float candidate, float best, bool max, bool last) {
  if (std::isnan(best)) return false;
  if (std::isnan(candidate)) return true;
  if (last) return max ? candidate >= best : candidate <= best;
  return max ? candidate > best : candidate < best;
}

}  // namespace

void arg_extreme(const float* x, int64_t* out, const AxisView& view, int64_t rows, bool max, bool last) {
  for (int64_t o = 0; o < rows; ++o) {
    const float* row = x + view.offset(o);
    for (int64_t i = 0; i < view.inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < view.n; ++k)
        if (better(row[k * view.inner + i], row[best * view.inner + i], max, last)) best = k;
      out[o * view.inner + i] = best;
    }
  }
}

void hardmax(const float* x, float* y, const AxisView& view, int64_t rows) {
  for (int64_t o = 0; o < rows; ++o) {
    const float* row = x + view.offset(o);
    float* out = y + view.offset(o);
    for (int64_t i = 0; i < view.inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 1; k < view.n; ++k)
        if (better(row[k * view.inner + i], row[best * view.inner + i], true, false)) best = k;
      for (int64_t k = 0; k < view.n; ++k) out[k * view.inner + i] = k == best ? 1.0f : 0.0f;
    }
  }
}

void top_k(const float* x, float* values, int64_t* indices, const AxisView& view, int64_t rows, int64_t k,
           bool largest) {
  std::vector<int64_t> order(static_cast<size_t>(view.n));
  for (int64_t o = 0; o < rows; ++o) {
    const float* row = x + view.offset(o);
    for (int64_t i = 0; i < view.inner; ++i) {
      auto at = [&](int64_t j) { return row[j * view.inner + i]; };
      // a before b: a ranks higher (NaN above every number), ties by the lower index.
      auto before = [&](int64_t a, int64_t b) {
        const float va = at(a), vb = at(b);
        const bool nan_a = std::isnan(va), nan_b = std::isnan(vb);
        if (nan_a != nan_b) return largest ? nan_a : nan_b;
        if (!nan_a && va != vb) return largest ? va > vb : va < vb;
        return a < b;
      };
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t out = (o * k + j) * view.inner + i;
        values[out] = at(order[static_cast<size_t>(j)]);
        indices[out] = order[static_cast<size_t>(j)];
      }
    }
  }
}

namespace {

// What cumsum accumulates T in: float sums in double, as the reference reductions do; integer
// ones unsigned, so that they wrap instead of overflowing (undefined behaviour).
template <typename T>
struct SumType {
  using type = std::make_unsigned_t<T>;
};
template <>
struct SumType<float> {
  using type = double;
};

}  // namespace

template <typename T>
void cumsum(const T* x, T* y, const AxisView& view, int64_t rows, bool exclusive, bool reverse) {
  for (int64_t o = 0; o < rows; ++o) {
    const T* row = x + view.offset(o);
    T* out = y + view.offset(o);
    for (int64_t i = 0; i < view.inner; ++i) {
      using Acc = typename SumType<T>::type;
      Acc sum = 0;
      for (int64_t step = 0; step < view.n; ++step) {
        const int64_t k = reverse ? view.n - 1 - step : step;
        const T value = row[k * view.inner + i];
        if (!exclusive) sum += static_cast<Acc>(value);
        out[k * view.inner + i] = static_cast<T>(sum);
        if (exclusive) sum += static_cast<Acc>(value);
      }
    }
  }
}

void lrn(const float* x, float* y, const AxisView& view, int64_t rows, const LrnParams& params) {
  const int64_t before = (params.size - 1) / 2, after = params.size / 2;  // floor and ceil of (size - 1) / 2
  const double scale = params.alpha / static_cast<double>(params.size);
  for (int64_t o = 0; o < rows; ++o) {
    const float* row = x + view.offset(o);
    float* out = y + view.offset(o);
    for (int64_t i = 0; i < view.inner; ++i) {
      for (int64_t c = 0; c < view.n; ++c) {
        double sum = 0;
        for (int64_t k = std::max<int64_t>(0, c - before); k <= std::min(view.n - 1, c + after); ++k) {
          const double v = row[k * view.inner + i];
          sum += v * v;
        }
        const double v = row[c * view.inner + i];
        out[c * view.inner + i] = static_cast<float>(v / std::pow(params.bias + scale * sum, params.beta));
      }
    }
  }
}

template void cumsum<float>(const float*, float*, const AxisView&, int64_t, bool, bool);
template void cumsum<int32_t>(const int32_t*, int32_t*, const AxisView&, int64_t, bool, bool);
template void cumsum<int64_t>(const int64_t*, int64_t*, const AxisView&, int64_t, bool, bool);

}  // namespace mt
