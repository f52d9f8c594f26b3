// softmax and log_softmax along one axis, in the input's layout. Softmax along the innermost
// physical dim is XNNPACK's softmax_nc; other cases are portable: rows when the axis is
// innermost, otherwise vectors of the inner dims processed together.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/engines/vec_math.h"

namespace mt::cpu {
namespace {

struct Geometry {
  size_t outer = 1, length = 1, inner = 1;
};

void softmax_row(const float* x, float* y, size_t n, bool log) {
  float max = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
  if (log) {
    for (size_t i = 0; i < n; ++i) sum += vm::exp(x[i] - max);
    const float shift = max + std::log(sum);
    for (size_t i = 0; i < n; ++i) y[i] = x[i] - shift;
  } else {
    for (size_t i = 0; i < n; ++i) {
      y[i] = vm::exp(x[i] - max);
      sum += y[i];
    }
    const float scale = 1.0f / sum;
    for (size_t i = 0; i < n; ++i) y[i] *= scale;
  }
}

constexpr size_t kColumns = 256;  // inner elements handled together in the strided case

// Softmax along a strided axis for `count` <= kColumns inner columns starting at x / y.
void softmax_columns(const float* x, float* y, const Geometry& g, size_t count, bool log) {
  float max[kColumns], sum[kColumns];
  std::fill(max, max + count, -std::numeric_limits<float>::infinity());
  std::fill(sum, sum + count, 0.0f);
  for (size_t a = 0; a < g.length; ++a) {
    const float* row = x + a * g.inner;
    for (size_t i = 0; i < count; ++i) max[i] = row[i] > max[i] ? row[i] : max[i];
  }
  for (size_t a = 0; a < g.length; ++a) {
    const float* row = x + a * g.inner;
    float* out = y + a * g.inner;
    for (size_t i = 0; i < count; ++i) {
      const float e = vm::exp(row[i] - max[i]);
      if (!log) out[i] = e;
      sum[i] += e;
    }
  }
  if (log) {
    for (size_t i = 0; i < count; ++i) max[i] += std::log(sum[i]);
    for (size_t a = 0; a < g.length; ++a)
      for (size_t i = 0; i < count; ++i) y[a * g.inner + i] = x[a * g.inner + i] - max[i];
  } else {
    for (size_t i = 0; i < count; ++i) sum[i] = 1.0f / sum[i];
    for (size_t a = 0; a < g.length; ++a)
      for (size_t i = 0; i < count; ++i) y[a * g.inner + i] *= sum[i];
  }
}

}  // namespace

std::optional<std::string> check_softmax(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_softmax(NodeContext& c) {
  const bool log = c.node().op == "log_softmax";
  const Value x0 = c.input(0);
  const size_t rank = x0.shape.size();
  Geometry g;
  if (rank > 0) {
    const int axis = physical_axis(x0.layout, axis_of(c.node(), attr_int(c.node(), "axis"), rank));
    const Shape physical = x0.physical();
    for (int k = 0; k < static_cast<int>(rank); ++k) {
      const auto size = static_cast<size_t>(physical[k]);
      if (k < axis) g.outer *= size;
      else if (k == axis) g.length = size;
      else g.inner *= size;
    }
  }

  if (!log && g.inner == 1 && g.length > 0) {
    xnn_operator_t op =
        c.create_xnn("xnn_create_softmax_nc_f32", xnn_create_softmax_nc_f32, g.length, g.length, g.length, 0);
    const Value x = c.xnn_input(0, x0.layout);
    const Value y = c.output(0, x0.layout);
    const size_t batch = g.outer;
    c.add_xnn(op, {x, y}, [batch](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
      return xnn_setup_softmax_nc_f32(o, batch, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), pool);
    });
    return;
  }

  const Value y = c.output(0, x0.layout);
  if (g.inner == 1) {
    c.add_kernel({x0, y}, [g, log](Pointers p, ThreadPool* pool) {
      const auto* x = static_cast<const float*>(p[0]);
      auto* out = static_cast<float*>(p[1]);
      parallel_chunks(pool, g.outer, std::max<size_t>(1, 4096 / std::max<size_t>(1, g.length)),
                      [&](size_t begin, size_t end) {
                        for (size_t o = begin; o < end; ++o) softmax_row(x + o * g.length, out + o * g.length, g.length, log);
                      });
    });
    return;
  }
  const size_t tiles = (g.inner + kColumns - 1) / kColumns;
  c.add_kernel({x0, y}, [g, log, tiles](Pointers p, ThreadPool* pool) {
    const auto* x = static_cast<const float*>(p[0]);
    auto* out = static_cast<float*>(p[1]);
    parallel_chunks(pool, g.outer * tiles, 1, [&](size_t begin, size_t end) {
      for (size_t unit = begin; unit < end; ++unit) {
        const size_t o = unit / tiles, i0 = unit % tiles * kColumns;
        const size_t offset = o * g.length * g.inner + i0;
        softmax_columns(x + offset, out + offset, g, std::min(kColumns, g.inner - i0), log);
      }
    });
  });
}

}  // namespace mt::cpu
