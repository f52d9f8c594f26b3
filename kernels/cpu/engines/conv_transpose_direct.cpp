// conv_transpose2d whose weights are computed at run time. Each run reorders the weights
// W[C][M/g][kH][kW] to [group][kH][kW][C/g][M/g]; then every output pixel gathers the input pixels
// that reach it: for tap (i, j), input row ih = (oh + pad_top - i * dilation) / stride when that
// division is exact and in range (columns alike), and adds x[ih][iw][group's C/g] times the tap's
// [C/g][M/g] block. Threads split the output rows (parallel.h).
#include <algorithm>

#include "kernels/cpu/engines/conv_transpose_direct.h"
#include "kernels/cpu/engines/runtime_conv_geometry.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

using Geometry = RuntimeConvGeometry;

// The input index that tap k of output index o reads along one axis, or -1.
int64_t source(int64_t o, int64_t k, int64_t stride, int64_t dilation, int64_t pad, size_t size) {
  const int64_t at = o + pad - k * dilation;
  if (at < 0 || at % stride != 0) return -1;
  const int64_t i = at / stride;
  return i < static_cast<int64_t>(size) ? i : -1;
}

// One output row (n, oh), every pixel and group, into `y` (NHWC).
void output_row(const Geometry& g, const float* x, const float* packed, const float* bias, float* y, size_t row) {
  const size_t n = row / g.out_h;
  const auto oh = static_cast<int64_t>(row % g.out_h);
  const size_t cg = g.group_in(), mg = g.group_out(), taps = static_cast<size_t>(g.kh * g.kw);
  for (size_t ow = 0; ow < g.out_w; ++ow) {
    float* out = y + (row * g.out_w + ow) * g.m;
    for (size_t o = 0; o < g.m; ++o) out[o] = bias != nullptr ? bias[o] : 0.0f;
    for (int64_t i = 0; i < g.kh; ++i) {
      const int64_t ih = source(oh, i, g.sh, g.dh, g.pt, g.h);
      if (ih < 0) continue;
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t iw = source(static_cast<int64_t>(ow), j, g.sw, g.dw, g.pl, g.w);
        if (iw < 0) continue;
        const float* in = x + ((n * g.h + static_cast<size_t>(ih)) * g.w + static_cast<size_t>(iw)) * g.c;
        const size_t tap = static_cast<size_t>(i * g.kw + j);
        for (size_t group = 0; group < g.groups; ++group) {
          const float* block = packed + (group * taps + tap) * cg * mg;
          float* acc = out + group * mg;
          for (size_t ci = 0; ci < cg; ++ci) {
            const float v = in[group * cg + ci];
            const float* wrow = block + ci * mg;
            for (size_t o = 0; o < mg; ++o) acc[o] += v * wrow[o];
          }
        }
      }
    }
    for (size_t o = 0; o < g.m; ++o) out[o] = std::clamp(out[o], g.low, g.high);
  }
}

}  // namespace

void plan_conv_transpose2d_runtime_weights(NodeContext& c) {
  const Geometry g = runtime_conv_geometry(c);
  std::vector<Value> values{c.input(0, nhwc_layout()), c.input(1, identity_layout(4))};
  const bool has_bias = c.has_input(2);
  if (has_bias) values.push_back(c.input(2, identity_layout(1)));
  values.push_back(c.output(0, nhwc_layout()));
  values.push_back(c.scratch(g.c * g.group_out() * static_cast<size_t>(g.kh * g.kw) * sizeof(float)));

  c.add_kernel(values, [g, has_bias](Pointers p, ThreadPool* pool) {
    const auto* x = static_cast<const float*>(p[0]);
    const auto* w = static_cast<const float*>(p[1]);
    const float* bias = has_bias ? static_cast<const float*>(p[2]) : nullptr;
    const size_t next = has_bias ? 3 : 2;
    auto* y = static_cast<float*>(p[next]);
    auto* packed = static_cast<float*>(p[next + 1]);
    // [C][M/g][kH][kW] -> [group][kH][kW][C/g][M/g]
    const size_t cg = g.group_in(), mg = g.group_out(), taps = static_cast<size_t>(g.kh * g.kw);
    for (size_t ci = 0; ci < g.c; ++ci)
      for (size_t o = 0; o < mg; ++o)
        for (size_t t = 0; t < taps; ++t)
          packed[((ci / cg * taps + t) * cg + ci % cg) * mg + o] = w[(ci * mg + o) * taps + t];
    parallel_chunks(pool, g.n * g.out_h, 1, [&](size_t begin, size_t end) {
      for (size_t row = begin; row < end; ++row) output_row(g, x, packed, bias, y, row);
    });
  });
}

}  // namespace mt::cpu
