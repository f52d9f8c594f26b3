// Winograd F(4x4, 3x3) (Lavin & Gray 2015): every 4x4 block of output pixels comes from a 6x6
// input tile. Per tile and channel the input is transformed (V = B^T d B), the 36 points of V are
// 36 independent GEMMs [tiles x C] x [C x M] against the transformed weights U = G g G^T, and the
// output transform (A^T m A) gives the 4x4 outputs. The GEMMs cost 36 multiplies per 16 outputs
// instead of 9 per output: 4x fewer. They run as 36 XNNPACK fully-connected operators whose
// packed weights are the transformed ones (built at planning, one point at a time, so the
// original 3x3 weights are never kept twice); the transforms are loops over contiguous NHWC
// channels, compiled for the x86-64 baseline and AVX2+FMA.
//
// Scratch (arena, alive during this node only): V [36][tiles][C] and the GEMM results
// [36][tiles][M]. The fp32 error of F(4x4, 3x3) grows with the transform constants (up to 8 and
// 1/24), yet stays small: 1.5e-6 of the output range on ResNet18's logits.
#include "kernels/cpu/winograd_conv.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/op_util.h"
#include "kernels/cpu/parallel.h"
#include "kernels/cpu/prepack.h"
#include "kernels/cpu/unary_portable.h"
#include "lib/core/error.h"

namespace mt::cpu {
namespace {

constexpr size_t kTile = 6, kOut = 4, kPoints = kTile * kTile;
constexpr size_t kBlock = 16;  // channels per pass of the transforms (stack temporaries)

// G of F(4x4, 3x3): weights 3 -> 6.
constexpr float kG[6][3] = {{1.0f / 4, 0, 0},
                            {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                            {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                            {1.0f / 24, 1.0f / 12, 1.0f / 6},
                            {1.0f / 24, -1.0f / 12, 1.0f / 6},
                            {0, 0, 1}};

struct Geometry {
  size_t n, h, w, c, m, out_h, out_w, tiles_h, tiles_w;
  int64_t pad_top, pad_left;
  float low, high;
  size_t tiles() const { return n * tiles_h * tiles_w; }
};

// B^T of F(4x4, 3x3) applied to d0..d5, written to out(0..5).
#define MT_WINO_BT(d0, d1, d2, d3, d4, d5, out) \
  do {                                          \
    out(0) = 4 * d0 - 5 * d2 + d4;              \
    out(1) = -4 * (d1 + d2) + d3 + d4;          \
    out(2) = 4 * (d1 - d2) - d3 + d4;           \
    out(3) = 2 * (d3 - d1) - d2 + d4;           \
    out(4) = 2 * (d1 - d3) - d2 + d4;           \
    out(5) = 4 * d1 - 5 * d3 + d5;              \
  } while (0)

// Input transform of channels [c0, c0 + N) of one tile: `pixel` are the tile's 6x6 input pixels
// (NHWC rows of channels), `dst` its 36 rows of V. N is a compile-time width so that the
// channel loops become whole vectors.
template <size_t N>
inline __attribute__((always_inline)) void input_block(const float* const (&pixel)[kTile][kTile],
                                                       float* const (&dst)[kPoints], size_t c0) {
  float t[kTile][kTile][N];  // t[r][j] = (B^T d)[r][j]
  for (size_t j = 0; j < kTile; ++j) {
    const float *__restrict p0 = pixel[0][j] + c0, *__restrict p1 = pixel[1][j] + c0,
                            *__restrict p2 = pixel[2][j] + c0, *__restrict p3 = pixel[3][j] + c0,
                            *__restrict p4 = pixel[4][j] + c0, *__restrict p5 = pixel[5][j] + c0;
    for (size_t k = 0; k < N; ++k) {
#define MT_OUT(r) t[r][j][k]
      MT_WINO_BT(p0[k], p1[k], p2[k], p3[k], p4[k], p5[k], MT_OUT);
#undef MT_OUT
    }
  }
  for (size_t r = 0; r < kTile; ++r) {
    float *__restrict o0 = dst[r * kTile] + c0, *__restrict o1 = dst[r * kTile + 1] + c0,
                      *__restrict o2 = dst[r * kTile + 2] + c0, *__restrict o3 = dst[r * kTile + 3] + c0,
                      *__restrict o4 = dst[r * kTile + 4] + c0, *__restrict o5 = dst[r * kTile + 5] + c0;
    for (size_t k = 0; k < N; ++k) {
#define MT_OUT(s) o##s[k]
      MT_WINO_BT(t[r][0][k], t[r][1][k], t[r][2][k], t[r][3][k], t[r][4][k], t[r][5][k], MT_OUT);
#undef MT_OUT
    }
  }
}
#undef MT_WINO_BT

// Input transform of tiles [begin, end): x (NHWC) -> v [36][tiles][C]. `zeros` holds C zeros
// for the pixels of a tile that fall in the padding.
inline __attribute__((always_inline)) void input_tiles(const Geometry& g, const float* x, const float* zeros,
                                                       float* v, size_t begin, size_t end) {
  const size_t tiles = g.tiles();
  for (size_t tile = begin; tile < end; ++tile) {
    const size_t n = tile / (g.tiles_h * g.tiles_w), rest = tile % (g.tiles_h * g.tiles_w);
    const int64_t top = static_cast<int64_t>(rest / g.tiles_w * kOut) - g.pad_top;
    const int64_t left = static_cast<int64_t>(rest % g.tiles_w * kOut) - g.pad_left;
    const float* pixel[kTile][kTile];
    for (size_t i = 0; i < kTile; ++i)
      for (size_t j = 0; j < kTile; ++j) {
        const int64_t ih = top + static_cast<int64_t>(i), iw = left + static_cast<int64_t>(j);
        const bool inside = ih >= 0 && ih < static_cast<int64_t>(g.h) && iw >= 0 && iw < static_cast<int64_t>(g.w);
        pixel[i][j] = inside ? x + ((n * g.h + static_cast<size_t>(ih)) * g.w + static_cast<size_t>(iw)) * g.c : zeros;
      }
    float* dst[kPoints];
    for (size_t k = 0; k < kPoints; ++k) dst[k] = v + (k * tiles + tile) * g.c;
    size_t c0 = 0;
    for (; c0 + kBlock <= g.c; c0 += kBlock) input_block<kBlock>(pixel, dst, c0);
    for (; c0 < g.c; ++c0) input_block<1>(pixel, dst, c0);
  }
}

// A^T of F(4x4, 3x3) applied to m0..m5, written to out(0..3).
#define MT_WINO_AT(m0, m1, m2, m3, m4, m5, out)                   \
  do {                                                            \
    const float p12 = m1 + m2, n12 = m1 - m2, p34 = m3 + m4, n34 = m3 - m4; \
    out(0) = m0 + p12 + p34;                                      \
    out(1) = n12 + 2 * n34;                                       \
    out(2) = p12 + 4 * p34;                                       \
    out(3) = n12 + 8 * n34 + m5;                                  \
  } while (0)

// Output transform of channels [m0, m0 + N) of one tile: `src` are its 36 rows of GEMM results,
// `out` its output pixels (null outside the image); adds the bias and clamps.
template <size_t N>
inline __attribute__((always_inline)) void output_block(const float* const (&src)[kPoints],
                                                        float* const (&out)[kOut][kOut], const float* bias,
                                                        float low, float high, size_t m0) {
  float t[kOut][kTile][N];  // t[r][s] = (A^T M)[r][s]
  for (size_t s = 0; s < kTile; ++s) {
    const float *__restrict p0 = src[s] + m0, *__restrict p1 = src[kTile + s] + m0,
                            *__restrict p2 = src[2 * kTile + s] + m0, *__restrict p3 = src[3 * kTile + s] + m0,
                            *__restrict p4 = src[4 * kTile + s] + m0, *__restrict p5 = src[5 * kTile + s] + m0;
    for (size_t k = 0; k < N; ++k) {
#define MT_OUT(r) t[r][s][k]
      MT_WINO_AT(p0[k], p1[k], p2[k], p3[k], p4[k], p5[k], MT_OUT);
#undef MT_OUT
    }
  }
  for (size_t r = 0; r < kOut; ++r) {
    float o[kOut][N];
    for (size_t k = 0; k < N; ++k) {
#define MT_OUT(q) o[q][k]
      MT_WINO_AT(t[r][0][k], t[r][1][k], t[r][2][k], t[r][3][k], t[r][4][k], t[r][5][k], MT_OUT);
#undef MT_OUT
    }
    for (size_t q = 0; q < kOut; ++q) {
      if (out[r][q] == nullptr) continue;
      float* __restrict y = out[r][q] + m0;
      for (size_t k = 0; k < N; ++k) {
        const float value = o[q][k] + bias[m0 + k];
        y[k] = value < low ? low : (value > high ? high : value);
      }
    }
  }
}
#undef MT_WINO_AT

// Output transform of tiles [begin, end): products [36][tiles][M] -> y (NHWC), plus bias, clamped.
inline __attribute__((always_inline)) void output_tiles(const Geometry& g, const float* products, const float* bias,
                                                        float* y, size_t begin, size_t end) {
  const size_t tiles = g.tiles();
  for (size_t tile = begin; tile < end; ++tile) {
    const size_t n = tile / (g.tiles_h * g.tiles_w), rest = tile % (g.tiles_h * g.tiles_w);
    const size_t top = rest / g.tiles_w * kOut, left = rest % g.tiles_w * kOut;
    const float* src[kPoints];
    for (size_t k = 0; k < kPoints; ++k) src[k] = products + (k * tiles + tile) * g.m;
    float* out[kOut][kOut];
    for (size_t r = 0; r < kOut; ++r)
      for (size_t q = 0; q < kOut; ++q)
        out[r][q] = top + r < g.out_h && left + q < g.out_w
                        ? y + ((n * g.out_h + top + r) * g.out_w + left + q) * g.m
                        : nullptr;
    size_t m0 = 0;
    for (; m0 + kBlock <= g.m; m0 += kBlock) output_block<kBlock>(src, out, bias, g.low, g.high, m0);
    for (; m0 < g.m; ++m0) output_block<1>(src, out, bias, g.low, g.high, m0);
  }
}

void input_baseline(const Geometry& g, const float* x, const float* zeros, float* v, size_t begin, size_t end) {
  input_tiles(g, x, zeros, v, begin, end);
}
void output_baseline(const Geometry& g, const float* products, const float* bias, float* y, size_t begin, size_t end) {
  output_tiles(g, products, bias, y, begin, end);
}
#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void input_avx2(const Geometry& g, const float* x, const float* zeros, float* v,
                                                   size_t begin, size_t end) {
  input_tiles(g, x, zeros, v, begin, end);
}
__attribute__((target("avx2,fma"))) void output_avx2(const Geometry& g, const float* products, const float* bias,
                                                    float* y, size_t begin, size_t end) {
  output_tiles(g, products, bias, y, begin, end);
}
#endif

// Tiles per chunk of work: enough to amortise the pool's scheduling.
constexpr size_t kMinTiles = 4;

// The node's work as one step: input transform, the 36 GEMMs, output transform. The GEMM
// operators are set up on the scratch buffers when the step is bound (their place in the arena
// does not change afterwards), so a run allocates nothing.
class WinogradStep final : public Step {
 public:
  WinogradStep(const Geometry& g, std::array<XnnOperator, kPoints> gemms, const float* bias, const float* zeros,
               pthreadpool_t pool, std::string what)
      : g_(g), gemms_(std::move(gemms)), bias_(bias), zeros_(zeros), pool_(pool), what_(std::move(what)),
        avx2_(cpu_has_avx2_fma()) {}

  // Pointers: x, y, V, products.
  void bind(Pointers p) override {
    x_ = static_cast<const float*>(p[0]);
    y_ = static_cast<float*>(p[1]);
    v_ = static_cast<float*>(p[2]);
    products_ = static_cast<float*>(p[3]);
    const size_t tiles = g_.tiles();
    for (size_t k = 0; k < kPoints; ++k)
      check_xnn(xnn_setup_fully_connected_nc_f32(gemms_[k].get(), tiles, v_ + k * tiles * g_.c,
                                                 products_ + k * tiles * g_.m, pool_),
                what_.c_str());
  }

  void run(pthreadpool_t pool) override {
    const size_t tiles = g_.tiles();
    parallel_chunks(pool, tiles, kMinTiles, [this](size_t begin, size_t end) {
#if defined(__x86_64__)
      if (avx2_) return input_avx2(g_, x_, zeros_, v_, begin, end);
#endif
      input_baseline(g_, x_, zeros_, v_, begin, end);
    });
    for (auto& gemm : gemms_) xnn_run_operator(gemm.get(), pool);
    parallel_chunks(pool, tiles, kMinTiles, [this](size_t begin, size_t end) {
#if defined(__x86_64__)
      if (avx2_) return output_avx2(g_, products_, bias_, y_, begin, end);
#endif
      output_baseline(g_, products_, bias_, y_, begin, end);
    });
  }

 private:
  Geometry g_;
  std::array<XnnOperator, kPoints> gemms_;
  const float* bias_;
  const float* zeros_;
  pthreadpool_t pool_;
  std::string what_;
  bool avx2_;
  const float* x_ = nullptr;
  float* y_ = nullptr;
  float* v_ = nullptr;
  float* products_ = nullptr;
};

}  // namespace

bool winograd_enabled() {
  const char* value = std::getenv("MT_CPU_WINOGRAD");
  if (value == nullptr) return true;
  const std::string_view v(value);
  if (v == "1") return true;
  if (v == "0") return false;
  fail(ExitCode::usage, "MT_CPU_WINOGRAD must be 0 or 1, got '{}'", v);
}

// Measured at 1 thread on ResNet's 3x3 convs (AVX-512 EPYC, against XNNPACK's direct conv at
// ~190 GFLOP/s): 56x56 (196 tiles, 64 channels) 1.8x faster, 28x28 (49 tiles, 128) 2.2x; 14x14
// (16 tiles, 256) only 1.25x, as 16-row GEMMs stream 4x the weights, and 7x7 (4 tiles) slower.
// Below 36 tiles the direct path stays: the small gain is not worth 4x the packed weights
// (+42 MB on ResNet50). Fewer than 16 channels leave the GEMMs too narrow.
bool winograd_pays(const WinogradShape& s) {
  const size_t tiles = ((s.out_h + kOut - 1) / kOut) * ((s.out_w + kOut - 1) / kOut);
  return s.in_channels >= 16 && s.out_channels >= 16 && tiles >= 36;
}

bool winograd_applies(const NodeContext& c) {
  if (!c.is_constant(1) || (c.has_input(2) && !c.is_constant(2))) return false;
  const Node& node = c.node();
  const Shape& ws = c.input_info(1).shape;
  if (ws.size() != 4 || ws[2] != 3 || ws[3] != 3 || attr_int(node, "group") != 1) return false;
  for (int64_t v : attr_ints(node, "strides"))
    if (v != 1) return false;
  for (int64_t v : attr_ints(node, "dilations"))
    if (v != 1) return false;
  return true;
}

void plan_conv2d_winograd(NodeContext& c) {
  const Node& node = c.node();
  const Shape& xs = c.input_info(0).shape;  // N, C, H, W
  const Shape& ys = c.output_info(0).shape;
  const auto& pads = attr_ints(node, "pads");
  Geometry g{.n = static_cast<size_t>(xs[0]), .h = static_cast<size_t>(xs[2]), .w = static_cast<size_t>(xs[3]),
             .c = static_cast<size_t>(xs[1]), .m = static_cast<size_t>(ys[1]), .out_h = static_cast<size_t>(ys[2]),
             .out_w = static_cast<size_t>(ys[3]), .tiles_h = 0, .tiles_w = 0, .pad_top = pads[0],
             .pad_left = pads[1], .low = attr_f32(node, "act_min"), .high = attr_f32(node, "act_max")};
  g.tiles_h = (g.out_h + kOut - 1) / kOut;
  g.tiles_w = (g.out_w + kOut - 1) / kOut;

  // Weights U_k[o][i] = (G g[o][i] G^T) at point k, one point at a time into `u`, which XNNPACK
  // packs; the model's 3x3 weights (OIHW, or OHWI when prepacked) are then no longer read.
  const float* w = c.constant(1).as<float>().data();
  const bool ohwi = c.input_info(1).layout == kLayoutOhwi;
  auto tap = [&](size_t o, size_t i, size_t a, size_t b) {
    return ohwi ? w[((o * 3 + a) * 3 + b) * g.c + i] : w[((o * g.c + i) * 3 + a) * 3 + b];
  };
  std::vector<float> u(g.m * g.c);
  std::array<XnnOperator, kPoints> gemms;
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t k = 0; k < kPoints; ++k) {
    const float* gr = kG[k / kTile];
    const float* gc = kG[k % kTile];
    for (size_t o = 0; o < g.m; ++o)
      for (size_t i = 0; i < g.c; ++i) {
        float sum = 0;
        for (size_t a = 0; a < 3; ++a)
          for (size_t b = 0; b < 3; ++b) sum += gr[a] * tap(o, i, a, b) * gc[b];
        u[o * g.c + i] = sum;
      }
    xnn_operator_t op = nullptr;
    c.check(xnn_create_fully_connected_nc_f32(g.c, g.m, g.c, g.m, u.data(), nullptr, -inf, inf, 0, &op),
            "xnn_create_fully_connected_nc_f32");
    gemms[k].reset(op);
  }
  c.count_packed(kPoints * g.m * g.c * sizeof(float));

  // The bias (zeros without one) and a row of zero channels for the padding, owned by the plan.
  auto* owned = static_cast<float*>(c.keep((g.m + g.c) * sizeof(float)));
  if (c.has_input(2)) std::memcpy(owned, c.constant(2).as<float>().data(), g.m * sizeof(float));
  const float* zeros = owned + g.m;

  const size_t tiles = g.tiles();
  const Value x = c.input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  const Value v = c.scratch(kPoints * tiles * g.c * sizeof(float));
  const Value products = c.scratch(kPoints * tiles * g.m * sizeof(float));
  c.add_step(std::make_unique<WinogradStep>(g, std::move(gemms), owned, zeros, c.pool(),
                                            "setup of node '" + node.name + "'"),
             {x, y, v, products});
}

}  // namespace mt::cpu
