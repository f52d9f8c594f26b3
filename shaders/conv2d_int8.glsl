// conv2d of int8 tensors (lib/ops/eval/quantized.cpp's arithmetic, equal to it): each invocation
// computes TILE neighbouring output pixels of OBS blocks of 4 output channels, laid out as
// shaders/conv2d.comp (ops/conv_grid.h). Weights int8 as weight_layout.h's pack_conv_weights_int8
// packs them (word o of a 4x4 block: 4 input channels to output channel o); the bias folds in the
// input zero point (bias - x_zero * sum of the channel's weights), so padding reads x_zero (real
// zero) and every tap is a plain product of stored integers. With MT_INT8_DOT (conv2d_int8_dot.comp)
// an input texel is packed into one word and meets each weight word in one dot4x8; without, the
// weights are unpacked and multiplied in fp32, exact: each product is at most 2^14 in magnitude, so
// 1024 of them (CHUNK input blocks) sum exactly before the fp32 sums are flushed into int32.
// Requantized per output channel with fp32 multipliers x_scale w_scale[c] / y_scale.
// spec 3-10: KH, KW, SH, SW, DH, DW, TILE, OBS. params: N, ICB, H, W, OCB, OH, OW, pad_top,
// pad_left, M, x_zero, y_zero, lo, hi (the int8 clamp bounds).
#include "common.glsl"
#include "int8.glsl"

layout(constant_id = 3) const int KH = 1;
layout(constant_id = 4) const int KW = 1;
layout(constant_id = 5) const int SH = 1;
layout(constant_id = 6) const int SW = 1;
layout(constant_id = 7) const int DH = 1;
layout(constant_id = 8) const int DW = 1;
layout(constant_id = 9) const int TILE = 4;
layout(constant_id = 10) const int OBS = 1;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
INTS_IN(3, Wt);  // a 4x4 block of int8 weights per ivec4 texel
layout(std430, binding = 4) readonly buffer Bias { ivec4 bias[]; };
layout(std430, binding = 5) readonly buffer Multipliers { vec4 multiplier[]; };
layout(std430, binding = 6) readonly buffer Ranges { int ranges[]; };

void main() {
  int ICB = p[1], H = p[2], W = p[3], OCB = p[4], OH = p[5], OW = p[6];
  int tiles = (OW + TILE - 1) / TILE;
  int i = int(gl_GlobalInvocationID.x), z = int(gl_GlobalInvocationID.y);
  int groups = (OCB + OBS - 1) / OBS;
  if (i >= tiles * OH || z >= p[0] * groups) return;
  int oy = i / tiles, ox0 = (i % tiles) * TILE;
  int n = z / groups, ob0 = (z % groups) * OBS;
  int blocks = min(OBS, OCB - ob0);
  float x_zero = float(p[10]);
  ivec4 acc[OBS * TILE];
  for (int b = 0; b < OBS; ++b)
    for (int t = 0; t < TILE; ++t) acc[b * TILE + t] = b < blocks ? bias[ob0 + b] : ivec4(0);
#ifdef MT_INT8_DOT
  uint padding = pack_int8(vec4(x_zero));
#else
  const int CHUNK = max(1, 1024 / (4 * KH * KW));
  vec4 sum[OBS * TILE];
  for (int k = 0; k < OBS * TILE; ++k) sum[k] = vec4(0.0);
#endif
  // Every block of the invocation reads the input blocks of the first (OBS > 1 only for group 1).
  int ib_begin = ranges[3 * ob0 + 1], ib_end = ranges[3 * ob0 + 2];
  int wbase[OBS];  // each block's first 4x4 block of weights
  for (int b = 0; b < OBS; ++b) wbase[b] = b < blocks ? ranges[3 * (ob0 + b)] : 0;
  int iy0 = oy * SH - p[7], ix0 = ox0 * SW - p[8];
  for (int ib = ib_begin; ib < ib_end; ++ib) {
    int plane = (n * ICB + ib) * H;
    for (int ky = 0; ky < KH; ++ky) {
      int iy = iy0 + ky * DH;
      bool row_inside = iy >= 0 && iy < H;
      int row = (plane + iy) * W;
      for (int kx = 0; kx < KW; ++kx) {
#ifdef MT_INT8_DOT
        uint v[TILE];
        for (int t = 0; t < TILE; ++t) {
          int ix = ix0 + t * SW + kx * DW;
          v[t] = row_inside && ix >= 0 && ix < W ? pack_int8(texelFetch(X, row + ix)) : padding;
        }
#else
        vec4 v[TILE];
        for (int t = 0; t < TILE; ++t) {
          int ix = ix0 + t * SW + kx * DW;
          v[t] = row_inside && ix >= 0 && ix < W ? texelFetch(X, row + ix) : vec4(x_zero);
        }
#endif
        for (int b = 0; b < OBS; ++b) {
          if (b >= blocks) break;
          ivec4 wq = texelFetch(Wt, wbase[b] + ((ib - ib_begin) * KH + ky) * KW + kx);
#ifdef MT_INT8_DOT
          uint w0 = uint(wq.x), w1 = uint(wq.y), w2 = uint(wq.z), w3 = uint(wq.w);
          for (int t = 0; t < TILE; ++t)
            acc[b * TILE + t] += ivec4(dot4x8(v[t], w0), dot4x8(v[t], w1), dot4x8(v[t], w2), dot4x8(v[t], w3));
#else
          vec4 w0 = unpack_int8(wq.x), w1 = unpack_int8(wq.y), w2 = unpack_int8(wq.z), w3 = unpack_int8(wq.w);
          for (int t = 0; t < TILE; ++t)
            sum[b * TILE + t] += vec4(dot(v[t], w0), dot(v[t], w1), dot(v[t], w2), dot(v[t], w3));
#endif
        }
      }
    }
#ifndef MT_INT8_DOT
    if ((ib - ib_begin) % CHUNK == CHUNK - 1 || ib == ib_end - 1) {
      for (int k = 0; k < OBS * TILE; ++k) {
        acc[k] += ivec4(sum[k]);
        sum[k] = vec4(0.0);
      }
    }
#endif
  }
  float y_zero = float(p[11]), lo = float(p[12]), hi = float(p[13]);
  for (int b = 0; b < OBS; ++b) {
    if (b >= blocks) break;
    int ob = ob0 + b;
    int valid = p[9] - ob * 4;
    int out_row = ((n * OCB + ob) * OH + oy) * OW;
    for (int t = 0; t < TILE; ++t) {
      if (ox0 + t >= OW) break;
      vec4 r = requantize(acc[b * TILE + t], multiplier[ob], y_zero, lo, hi);
      for (int l = valid; l < 4; ++l) r[l] = 0.0;
      y[out_row + ox0 + t] = SVEC4(r);
    }
  }
}
