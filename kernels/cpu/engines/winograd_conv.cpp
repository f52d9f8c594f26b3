// Winograd F(4x4, 3x3) (Lavin & Gray 2015): every 4x4 block of output pixels comes from a 6x6
// input tile. Per tile and channel the input is transformed (V = B^T d B), the 36 points of V are
// 36 independent GEMMs [tiles x C] x [C x M] against the transformed weights U = G g G^T, and the
// output transform (A^T m A) gives the 4x4 outputs. The GEMMs cost 36 multiplies per 16 outputs
// instead of 9 per output: 4x fewer. F(2x2, 3x3) is the same with 4x4 tiles and 16 points (2.25x
// fewer), for layers too small to fill F(4x4)'s GEMMs. The GEMMs run on our packed GEMM on
// AVX-512 CPUs (packed_gemm.h), else as XNNPACK fully-connected operators; either way their packed
// weights are the transformed ones: stored so by mt-prepack (the layouts cpu_winograd4_gemm and
// cpu_winograd2_gemm read in place; cpu_winograd4 and cpu_winograd2 for XNNPACK to pack), or built at
// planning one point at a time, so that the original 3x3 weights are never kept twice. The
// transforms are loops over contiguous NHWC channels, compiled for the x86-64 baseline and AVX2+FMA.
//
// Scratch (arena, alive during this node only): V [points][tiles][C] and the GEMM results
// [points][tiles][M]. The fp32 error of F(4x4, 3x3) grows with the transform constants (up to 8
// and 1/24), yet stays small: ~1e-6 of the output range on ResNet18's logits.
#include "kernels/cpu/engines/winograd_conv.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/plan/prepack.h"
#include "kernels/cpu/ops/unary_portable.h"
#include "lib/core/error.h"

namespace mt::cpu {
namespace {

constexpr size_t kBlock = 16;  // channels per pass of the transforms (stack temporaries)

// The two variants: F(m x m, 3x3) reads (m + 2) x (m + 2) input tiles. bt: B^T applied to one
// column of a tile; at: A^T; kG: G, which takes 3 weights to kTile.
struct F4 {  // F(4x4, 3x3): 36 points per 16 outputs
  static constexpr size_t kTile = 6, kOut = 4;
  static constexpr float kG[6][3] = {{1.0f / 4, 0, 0},
                                     {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                     {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                     {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                     {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                     {0, 0, 1}};
  static inline __attribute__((always_inline)) void bt(const float (&d)[6], float (&o)[6]) {
    o[0] = 4 * d[0] - 5 * d[2] + d[4];
    o[1] = -4 * (d[1] + d[2]) + d[3] + d[4];
    o[2] = 4 * (d[1] - d[2]) - d[3] + d[4];
    o[3] = 2 * (d[3] - d[1]) - d[2] + d[4];
    o[4] = 2 * (d[1] - d[3]) - d[2] + d[4];
    o[5] = 4 * d[1] - 5 * d[3] + d[5];
  }
  static inline __attribute__((always_inline)) void at(const float (&m)[6], float (&o)[4]) {
    const float p12 = m[1] + m[2], n12 = m[1] - m[2], p34 = m[3] + m[4], n34 = m[3] - m[4];
    o[0] = m[0] + p12 + p34;
    o[1] = n12 + 2 * n34;
    o[2] = p12 + 4 * p34;
    o[3] = n12 + 8 * n34 + m[5];
  }
};

struct F2 {  // F(2x2, 3x3): 16 points per 4 outputs
  static constexpr size_t kTile = 4, kOut = 2;
  static constexpr float kG[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
  static inline __attribute__((always_inline)) void bt(const float (&d)[4], float (&o)[4]) {
    o[0] = d[0] - d[2];
    o[1] = d[1] + d[2];
    o[2] = d[2] - d[1];
    o[3] = d[1] - d[3];
  }
  static inline __attribute__((always_inline)) void at(const float (&m)[4], float (&o)[2]) {
    o[0] = m[0] + m[1] + m[2];
    o[1] = m[1] - m[2] - m[3];
  }
};

struct Geometry {
  size_t n, h, w, c, m, out_h, out_w, tiles_h, tiles_w;
  int64_t pad_top, pad_left;
  float low, high;
  size_t tiles() const { return n * tiles_h * tiles_w; }
};

// Input transform of channels [c0, c0 + N) of one tile: `pixel` are the tile's input pixels
// (NHWC rows of channels), `dst` its rows of V, one per point. N is a compile-time width so that
// the channel loops become whole vectors.
template <typename V, size_t N>
inline __attribute__((always_inline)) void input_block(const float* const (&pixel)[V::kTile][V::kTile],
                                                       float* const (&dst)[V::kTile * V::kTile], size_t c0) {
  constexpr size_t T = V::kTile;
  float t[T][T][N];  // t[r][j] = (B^T d)[r][j]
  for (size_t j = 0; j < T; ++j)
    for (size_t k = 0; k < N; ++k) {
      float d[T], o[T];
      for (size_t i = 0; i < T; ++i) d[i] = pixel[i][j][c0 + k];
      V::bt(d, o);
      for (size_t r = 0; r < T; ++r) t[r][j][k] = o[r];
    }
  for (size_t r = 0; r < T; ++r) {
    float row[T][N];
    for (size_t k = 0; k < N; ++k) {
      float d[T], o[T];
      for (size_t j = 0; j < T; ++j) d[j] = t[r][j][k];
      V::bt(d, o);
      for (size_t s = 0; s < T; ++s) row[s][k] = o[s];
    }
    // One store loop per row of V: the rows cannot overlap, which the compiler cannot know.
    for (size_t s = 0; s < T; ++s) {
      float* __restrict out = dst[r * T + s] + c0;
      for (size_t k = 0; k < N; ++k) out[k] = row[s][k];
    }
  }
}

// Input transform of tiles [begin, end): x (NHWC) -> v [points][tiles][C]. `zeros` holds C zeros
// for the pixels of a tile that fall in the padding.
template <typename V>
inline __attribute__((always_inline)) void input_tiles(const Geometry& g, const float* x, const float* zeros,
                                                       float* v, size_t begin, size_t end) {
  constexpr size_t T = V::kTile;
  const size_t tiles = g.tiles();
  for (size_t tile = begin; tile < end; ++tile) {
    const size_t n = tile / (g.tiles_h * g.tiles_w), rest = tile % (g.tiles_h * g.tiles_w);
    const int64_t top = static_cast<int64_t>(rest / g.tiles_w * V::kOut) - g.pad_top;
    const int64_t left = static_cast<int64_t>(rest % g.tiles_w * V::kOut) - g.pad_left;
    const float* pixel[T][T];
    for (size_t i = 0; i < T; ++i)
      for (size_t j = 0; j < T; ++j) {
        const int64_t ih = top + static_cast<int64_t>(i), iw = left + static_cast<int64_t>(j);
        const bool inside = ih >= 0 && ih < static_cast<int64_t>(g.h) && iw >= 0 && iw < static_cast<int64_t>(g.w);
        pixel[i][j] = inside ? x + ((n * g.h + static_cast<size_t>(ih)) * g.w + static_cast<size_t>(iw)) * g.c : zeros;
      }
    float* dst[T * T];
    for (size_t k = 0; k < T * T; ++k) dst[k] = v + (k * tiles + tile) * g.c;
    size_t c0 = 0;
    for (; c0 + kBlock <= g.c; c0 += kBlock) input_block<V, kBlock>(pixel, dst, c0);
    for (; c0 < g.c; ++c0) input_block<V, 1>(pixel, dst, c0);
  }
}

// Output transform of channels [m0, m0 + N) of one tile: `src` are its rows of GEMM results, one
// per point, `out` its output pixels (null outside the image); adds the bias and clamps.
template <typename V, size_t N>
inline __attribute__((always_inline)) void output_block(const float* const (&src)[V::kTile * V::kTile],
                                                        float* const (&out)[V::kOut][V::kOut], const float* bias,
                                                        float low, float high, size_t m0) {
  constexpr size_t T = V::kTile, O = V::kOut;
  float t[O][T][N];  // t[r][s] = (A^T M)[r][s]
  for (size_t s = 0; s < T; ++s)
    for (size_t k = 0; k < N; ++k) {
      float p[T], o[O];
      for (size_t i = 0; i < T; ++i) p[i] = src[i * T + s][m0 + k];
      V::at(p, o);
      for (size_t r = 0; r < O; ++r) t[r][s][k] = o[r];
    }
  for (size_t r = 0; r < O; ++r) {
    float o[O][N];
    for (size_t k = 0; k < N; ++k) {
      float p[T], q[O];
      for (size_t s = 0; s < T; ++s) p[s] = t[r][s][k];
      V::at(p, q);
      for (size_t c = 0; c < O; ++c) o[c][k] = q[c] + bias[m0 + k];
    }
    for (size_t c = 0; c < O; ++c) {
      if (out[r][c] == nullptr) continue;
      float* __restrict y = out[r][c] + m0;
      // std::min/max, not a ?: chain, which GCC compiled to a branch per value: mispredicted
      // half the time under a ReLU (1.6x slower transforms on ResNet18's first conv per block).
      for (size_t k = 0; k < N; ++k) y[k] = std::min(std::max(o[c][k], low), high);
    }
  }
}

// Output transform of tiles [begin, end): products [points][tiles][M] -> y (NHWC), plus bias, clamped.
template <typename V>
inline __attribute__((always_inline)) void output_tiles(const Geometry& g, const float* products, const float* bias,
                                                        float* y, size_t begin, size_t end) {
  constexpr size_t T = V::kTile, O = V::kOut;
  const size_t tiles = g.tiles();
  for (size_t tile = begin; tile < end; ++tile) {
    const size_t n = tile / (g.tiles_h * g.tiles_w), rest = tile % (g.tiles_h * g.tiles_w);
    const size_t top = rest / g.tiles_w * O, left = rest % g.tiles_w * O;
    const float* src[T * T];
    for (size_t k = 0; k < T * T; ++k) src[k] = products + (k * tiles + tile) * g.m;
    float* out[O][O];
    for (size_t r = 0; r < O; ++r)
      for (size_t c = 0; c < O; ++c)
        out[r][c] = top + r < g.out_h && left + c < g.out_w
                        ? y + ((n * g.out_h + top + r) * g.out_w + left + c) * g.m
                        : nullptr;
    size_t m0 = 0;
    for (; m0 + kBlock <= g.m; m0 += kBlock) output_block<V, kBlock>(src, out, bias, g.low, g.high, m0);
    for (; m0 < g.m; ++m0) output_block<V, 1>(src, out, bias, g.low, g.high, m0);
  }
}

// Each transform compiled for the x86-64 baseline and for AVX2+FMA, picked at run time.
template <typename V>
void input_baseline(const Geometry& g, const float* x, const float* zeros, float* v, size_t begin, size_t end) {
  input_tiles<V>(g, x, zeros, v, begin, end);
}
template <typename V>
void output_baseline(const Geometry& g, const float* products, const float* bias, float* y, size_t begin, size_t end) {
  output_tiles<V>(g, products, bias, y, begin, end);
}
#if defined(__x86_64__)
template <typename V>
__attribute__((target("avx2,fma"))) void input_avx2(const Geometry& g, const float* x, const float* zeros, float* v,
                                                   size_t begin, size_t end) {
  input_tiles<V>(g, x, zeros, v, begin, end);
}
template <typename V>
__attribute__((target("avx2,fma"))) void output_avx2(const Geometry& g, const float* products, const float* bias,
                                                    float* y, size_t begin, size_t end) {
  output_tiles<V>(g, products, bias, y, begin, end);
}
#endif

// Tiles per chunk of work: enough to amortise the pool's scheduling.
constexpr size_t kMinTiles = 4;

// The node's work as one step: input transform, one GEMM per point, output transform. The GEMM
// operators are set up on the scratch buffers when the step is bound (their place in the arena
// does not change afterwards), so a run allocates nothing.
template <typename V>
class WinogradStep final : public Step {
 public:
  static constexpr size_t kPoints = V::kTile * V::kTile;

  // The GEMMs are either XNNPACK operators or packed_gemm.h weights, one per point.
  WinogradStep(const Geometry& g, std::vector<XnnOperator> gemms, std::vector<PackedWeights> packed, const float* bias,
               const float* zeros, ThreadPool* pool, std::string what, bool avx2)
      : g_(g),
        gemms_(std::move(gemms)),
        packed_(std::move(packed)),
        bias_(bias),
        zeros_(zeros),
        pool_(pool),
        what_(std::move(what)),
        avx2_(avx2) {}

  // Pointers: x, y, V, products.
  void bind(Pointers p) override {
    x_ = static_cast<const float*>(p[0]);
    y_ = static_cast<float*>(p[1]);
    v_ = static_cast<float*>(p[2]);
    products_ = static_cast<float*>(p[3]);
    const size_t tiles = g_.tiles();
    for (size_t k = 0; k < gemms_.size(); ++k)
      check_xnn(xnn_setup_fully_connected_nc_f32(gemms_[k].get(), tiles, v_ + k * tiles * g_.c,
                                                 products_ + k * tiles * g_.m, xnnpack_pool(pool_)),
                what_.c_str());
  }

  void run(ThreadPool* pool) override {
    const size_t tiles = g_.tiles();
    parallel_chunks(pool, tiles, kMinTiles, [this](size_t begin, size_t end) {
#if defined(__x86_64__)
      if (avx2_) return input_avx2<V>(g_, x_, zeros_, v_, begin, end);
#endif
      input_baseline<V>(g_, x_, zeros_, v_, begin, end);
    });
    for (auto& gemm : gemms_) check_xnn(run_xnnpack(gemm.get(), pool), "xnn_run_operator (winograd products)");
    // Threads take whole points (16 or 36 of them): one fork-join per conv instead of one per point
    // (ResNet18 at 2 threads: 6.83-6.86 -> 6.23-6.29 ms median in the quiet runs).
    parallel_chunks(pool, packed_.size(), 1, [this, tiles](size_t begin, size_t end) {
      const float inf = std::numeric_limits<float>::infinity();
      for (size_t k = begin; k < end; ++k)
        packed_gemm(packed_[k], tiles, v_ + k * tiles * g_.c, g_.c, products_ + k * tiles * g_.m, g_.m, -inf, inf,
                    nullptr);
    });
    parallel_chunks(pool, tiles, kMinTiles, [this](size_t begin, size_t end) {
#if defined(__x86_64__)
      if (avx2_) return output_avx2<V>(g_, products_, bias_, y_, begin, end);
#endif
      output_baseline<V>(g_, products_, bias_, y_, begin, end);
    });
  }

 private:
  Geometry g_;
  std::vector<XnnOperator> gemms_;
  std::vector<PackedWeights> packed_;
  const float* bias_;
  const float* zeros_;
  ThreadPool* pool_;
  std::string what_;
  bool avx2_;
  const float* x_ = nullptr;
  float* y_ = nullptr;
  float* v_ = nullptr;
  float* products_ = nullptr;
};

// The weights U_k of every point k, one point at a time (a transformed point of the model's 3x3
// weights, or a stored row of points) for XNNPACK to pack into a fully-connected operator.
std::vector<XnnOperator> xnnpack_gemms(NodeContext& c, const Geometry& g, size_t tile) {
  const TensorInfo& w = c.input_info(1);
  const std::optional<CpuLayout> stored = parse_cpu_layout(w.layout);
  const bool rows = stored == (tile == 4 ? CpuLayout::winograd4 : CpuLayout::winograd2);
  std::vector<float> u(rows ? 0 : g.m * g.c);
  std::vector<XnnOperator> gemms;
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t k = 0; k < winograd_points(tile); ++k) {
    const float* point = w.data.as<float>().data() + k * g.m * g.c;
    if (!rows) {
      winograd_weights(u.data(), w.data.as<float>().data(), w.layout == kLayoutOhwi, tile, k, g.c, g.m);
      point = u.data();
    }
    xnn_operator_t op = c.create_xnn("xnn_create_fully_connected_nc_f32", xnn_create_fully_connected_nc_f32, g.c, g.m,
                                     g.c, g.m, point, nullptr, -inf, inf, 0);
    gemms.emplace_back(op);
  }
  c.count_packed(winograd_points(tile) * g.m * g.c * sizeof(float));
  return gemms;
}

template <typename V>
void plan_variant(NodeContext& c) {
  constexpr size_t T = V::kTile, kPoints = T * T;
  const Node& node = c.node();
  const Shape& xs = c.input_info(0).shape;  // N, C, H, W
  const Shape& ys = c.output_info(0).shape;
  const auto& pads = attr_ints(node, "pads");
  Geometry g{.n = static_cast<size_t>(xs[0]), .h = static_cast<size_t>(xs[2]), .w = static_cast<size_t>(xs[3]),
             .c = static_cast<size_t>(xs[1]), .m = static_cast<size_t>(ys[1]), .out_h = static_cast<size_t>(ys[2]),
             .out_w = static_cast<size_t>(ys[3]), .tiles_h = 0, .tiles_w = 0, .pad_top = pads[0],
             .pad_left = pads[1], .low = attr_f32(node, "act_min"), .high = attr_f32(node, "act_max")};
  g.tiles_h = (g.out_h + V::kOut - 1) / V::kOut;
  g.tiles_w = (g.out_w + V::kOut - 1) / V::kOut;

  // The packed GEMM reads the points' weights packed (in place when mt-prepack stored them so), XNNPACK
  // packs them itself; the model's 3x3 weights are then no longer read.
  std::vector<XnnOperator> gemms;
  std::vector<PackedWeights> packed;
  if (c.packed_gemm()) {
    const auto* points = static_cast<const std::byte*>(
        packed_weights(c, 1, V::kOut == 4 ? CpuLayout::winograd4_gemm : CpuLayout::winograd2_gemm));
    for (size_t k = 0; k < kPoints; ++k)
      packed.push_back(packed_gemm_view(points + k * packed_gemm_bytes(g.c, g.m), g.c, g.m));
  } else {
    gemms = xnnpack_gemms(c, g, V::kOut);
  }

  // The bias, read where the model holds it (zeros without one), and a row of zero channels for the padding.
  const auto* zeros = static_cast<const float*>(c.keep(std::max(g.m, g.c) * sizeof(float)));
  const float* bias = c.has_input(2) ? reinterpret_cast<const float*>(c.constant_in_place(2)) : zeros;

  const size_t tiles = g.tiles();
  const Value x = c.input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  const Value v = c.scratch(kPoints * tiles * g.c * sizeof(float));
  const Value products = c.scratch(kPoints * tiles * g.m * sizeof(float));
  c.add_step(std::make_unique<WinogradStep<V>>(g, std::move(gemms), std::move(packed), bias, zeros, c.pool(),
                                               "setup of node '" + node.name + "'", c.avx2_fma()),
             {x, y, v, products});
}

}  // namespace

// Measured at 1 thread on ResNet18's 3x3 convs (AVX-512 EPYC, against XNNPACK's direct conv at
// ~190 GFLOP/s, 1.2-1.3 ms each): F(4x4, 3x3) makes 56x56 (196 tiles, 64 channels) 1.8-1.9x faster
// and 28x28 (49 tiles, 128 channels) 2.2x, but 14x14 (16 tiles, 256 channels) only 1.25x: 16-row
// GEMMs stream 4x the weights. There F(2x2, 3x3) (49 tiles, 16/9 the weights) is 1.7-1.8x faster.
// 7x7 x 512 gains at most 1.1x from F(2x2) (16 tiles) for 7 MB more packed weights per layer, so
// it keeps the direct path. Fewer than 16 channels leave the GEMMs too narrow.
size_t winograd_tile(const WinogradShape& s) {
  if (s.in_channels < 16 || s.out_channels < 16) return 0;
  auto tiles = [&](size_t m) { return ((s.out_h + m - 1) / m) * ((s.out_w + m - 1) / m); };
  if (tiles(4) >= 36) return 4;
  if (tiles(2) >= 36) return 2;
  return 0;
}

bool winograd_applies(const Graph& graph, const Node& node) {
  const bool bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  if (!graph.tensor(node.inputs[1]).is_constant() || (bias && !graph.tensor(node.inputs[2]).is_constant()))
    return false;
  const Shape& ws = graph.tensor(node.inputs[1]).shape;
  if (ws.size() != 4 || ws[2] != 3 || ws[3] != 3 || attr_int(node, "group") != 1) return false;
  for (int64_t v : attr_ints(node, "strides"))
    if (v != 1) return false;
  for (int64_t v : attr_ints(node, "dilations"))
    if (v != 1) return false;
  return true;
}

size_t winograd_points(size_t tile) { return (tile + 2) * (tile + 2); }

void winograd_weights(float* u, const float* w, bool ohwi, size_t tile, size_t point, size_t c, size_t m) {
  if (tile != 4 && tile != 2) fail(ExitCode::failure, "internal: no Winograd F({0}x{0}, 3x3)", tile);
  const size_t t = tile + 2;
  const float* gr = tile == 4 ? F4::kG[point / t] : F2::kG[point / t];
  const float* gc = tile == 4 ? F4::kG[point % t] : F2::kG[point % t];
  auto tap = [&](size_t o, size_t i, size_t a, size_t b) {
    return ohwi ? w[((o * 3 + a) * 3 + b) * c + i] : w[((o * c + i) * 3 + a) * 3 + b];
  };
  for (size_t o = 0; o < m; ++o)
    for (size_t i = 0; i < c; ++i) {
      float sum = 0;
      for (size_t a = 0; a < 3; ++a)
        for (size_t b = 0; b < 3; ++b) sum += gr[a] * tap(o, i, a, b) * gc[b];
      u[o * c + i] = sum;
    }
}

void plan_conv2d_winograd(NodeContext& c, size_t tile) {
  if (tile == 4) return plan_variant<F4>(c);
  if (tile == 2) return plan_variant<F2>(c);
  fail(ExitCode::failure, "internal: no Winograd F({0}x{0}, 3x3)", tile);
}

}  // namespace mt::cpu
