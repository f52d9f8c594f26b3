// conv2d whose weights are computed at run time (XNNPACK packs weights only at creation): each
// run reorders the weights to [group][kH*kW*C/g][M/g], then every output row of pixels is an
// im2col block times those weights through the portable gemm. Each thread owns one im2col block.
#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/cpu/engines/conv_gemm.h"
#include "kernels/cpu/engines/gemm.h"
#include "kernels/cpu/engines/runtime_conv_geometry.h"
#include "kernels/cpu/plan/op_util.h"

namespace mt::cpu {
namespace {

using Geometry = RuntimeConvGeometry;

// One output row (n, oh) of group g: im2col into `columns`, gemm into the NHWC output.
void conv_row(const Geometry& g, const float* x, const float* packed, const float* bias, float* y, size_t row,
              size_t group, float* columns) {
  const size_t n = row / g.out_h;
  const auto oh = static_cast<int64_t>(row % g.out_h);
  const size_t cg = g.group_in(), depth = g.depth();
  for (size_t ow = 0; ow < g.out_w; ++ow) {
    float* column = columns + ow * depth;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t ih = oh * g.sh - g.pt + i * g.dh;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t iw = static_cast<int64_t>(ow) * g.sw - g.pl + j * g.dw;
        float* dst = column + static_cast<size_t>(i * g.kw + j) * cg;
        if (ih < 0 || ih >= static_cast<int64_t>(g.h) || iw < 0 || iw >= static_cast<int64_t>(g.w)) {
          std::fill(dst, dst + cg, 0.0f);
        } else {
          const float* src = x + ((n * g.h + static_cast<size_t>(ih)) * g.w + static_cast<size_t>(iw)) * g.c + group * cg;
          std::memcpy(dst, src, cg * sizeof(float));
        }
      }
    }
  }
  float* out = y + row * g.out_w * g.m + group * g.group_out();
  gemm(g.out_w, g.group_out(), depth, columns, depth, packed + group * depth * g.group_out(), g.group_out(), out, g.m,
       bias != nullptr ? bias + group * g.group_out() : nullptr);
  for (size_t ow = 0; ow < g.out_w; ++ow)
    for (size_t o = 0; o < g.group_out(); ++o) {
      float& v = out[ow * g.m + o];
      v = v < g.low ? g.low : (v > g.high ? g.high : v);
    }
}

}  // namespace

void plan_conv2d_runtime_weights(NodeContext& c) {
  const Geometry g = runtime_conv_geometry(c);
  const size_t threads = static_cast<size_t>(std::max(1, c.threads()));
  std::vector<Value> values{c.input(0, nhwc_layout()), c.input(1, identity_layout(4))};
  const bool has_bias = c.has_input(2);
  if (has_bias) values.push_back(c.input(2, identity_layout(1)));
  values.push_back(c.output(0, nhwc_layout()));
  values.push_back(c.scratch(g.m * g.depth() * sizeof(float)));
  values.push_back(c.scratch(threads * g.out_w * g.depth() * sizeof(float)));

  c.add_kernel(values, [g, has_bias, threads](Pointers p, ThreadPool* pool) {
    const auto* x = static_cast<const float*>(p[0]);
    const auto* w = static_cast<const float*>(p[1]);
    const float* bias = has_bias ? static_cast<const float*>(p[2]) : nullptr;
    const size_t next = has_bias ? 3 : 2;
    auto* y = static_cast<float*>(p[next]);
    auto* packed = static_cast<float*>(p[next + 1]);
    auto* columns = static_cast<float*>(p[next + 2]);
    // [M][C/g][kH][kW] -> [group][kH][kW][C/g][M/g]
    const size_t cg = g.group_in(), mg = g.group_out(), taps = static_cast<size_t>(g.kh * g.kw);
    for (size_t o = 0; o < g.m; ++o)
      for (size_t ci = 0; ci < cg; ++ci)
        for (size_t t = 0; t < taps; ++t)
          packed[(o / mg) * g.depth() * mg + (t * cg + ci) * mg + o % mg] = w[(o * cg + ci) * taps + t];
    const size_t rows = g.n * g.out_h;
    struct Task {
      const Geometry* g;
      const float *x, *packed, *bias;
      float *y, *columns;
      size_t rows, tasks;
    } task{&g, x, packed, bias, y, columns, rows, threads};
    auto run = [](void* raw, size_t t) {
      const auto* k = static_cast<const Task*>(raw);
      const size_t begin = k->rows * t / k->tasks, end = k->rows * (t + 1) / k->tasks;
      float* own = k->columns + t * k->g->out_w * k->g->depth();
      for (size_t row = begin; row < end; ++row)
        for (size_t group = 0; group < k->g->groups; ++group) conv_row(*k->g, k->x, k->packed, k->bias, k->y, row, group, own);
    };
    if (pool == nullptr || threads == 1) {
      for (size_t t = 0; t < threads; ++t) run(&task, t);
    } else {
      parallelize(pool, run, &task, threads);
    }
  });
}

}  // namespace mt::cpu
