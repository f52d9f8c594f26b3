#version 450
// Depthwise conv2d of int8 tensors (group == C == M; lib/ops/eval/quantized.cpp's arithmetic, equal
// to it): each channel filtered by its own kernel, 4 channels per texel, TILE neighbouring output
// pixels of one channel block per invocation, as shaders/depthwise.comp. Taps outside the input are
// skipped (padding is x_zero, real zero); each product (x - x_zero) w is at most 255 x 128 < 2^15 in
// magnitude and is summed in fp32 one kernel row at a time (KW < 512 products), then flushed into
// int32, so the sum is exact. Weights as pack_depthwise_weights_int8 packs them (one word of 4
// channels per block and tap). Requantized per channel with fp32 multipliers.
// spec 3-9: KH, KW, SH, SW, DH, DW, TILE. params: N, CB, H, W, OH, OW, pad_top, pad_left, C,
// x_zero, y_zero, lo, hi.
#include "common.glsl"
#include "int8.glsl"

layout(constant_id = 3) const int KH = 1;
layout(constant_id = 4) const int KW = 1;
layout(constant_id = 5) const int SH = 1;
layout(constant_id = 6) const int SW = 1;
layout(constant_id = 7) const int DH = 1;
layout(constant_id = 8) const int DW = 1;
layout(constant_id = 9) const int TILE = 4;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
INTS_IN(3, Wt);  // one word of 4 channels' int8 weights per texel
layout(std430, binding = 4) readonly buffer Bias { ivec4 bias[]; };
layout(std430, binding = 5) readonly buffer Multipliers { vec4 multiplier[]; };

void main() {
  int CB = p[1], H = p[2], W = p[3], OH = p[4], OW = p[5];
  // One invocation per (image and channel block, output row, tile of the row), in that order: a flat
  // grid keeps every lane busy whatever the layer's shape (7x7 ones too).
  int tiles = (OW + TILE - 1) / TILE, i = global_index();
  if (i >= tiles * OH * p[0] * CB) return;
  int ox0 = (i % tiles) * TILE, oy = (i / tiles) % OH, z = i / (tiles * OH);
  int cb = z % CB;
  float x_zero = float(p[9]);
  ivec4 acc[TILE];
  for (int t = 0; t < TILE; ++t) acc[t] = bias[cb];
  int iy0 = oy * SH - p[6], ix0 = ox0 * SW - p[7];
  for (int ky = 0; ky < KH; ++ky) {
    int iy = iy0 + ky * DH;
    if (iy < 0 || iy >= H) continue;
    int row = (z * H + iy) * W;
    vec4 sum[TILE];
    for (int t = 0; t < TILE; ++t) sum[t] = vec4(0.0);
    for (int kx = 0; kx < KW; ++kx) {
      vec4 wv = unpack_int8(texelFetch(Wt, (cb * KH + ky) * KW + kx).x);
      for (int t = 0; t < TILE; ++t) {
        int ix = ix0 + t * SW + kx * DW;
        if (ix < 0 || ix >= W) continue;
        sum[t] += wv * (texelFetch(X, row + ix) - x_zero);
      }
    }
    for (int t = 0; t < TILE; ++t) acc[t] += ivec4(sum[t]);
  }
  float y_zero = float(p[10]), lo = float(p[11]), hi = float(p[12]);
  int valid = p[8] - cb * 4;
  int out_row = (z * OH + oy) * OW;
  for (int t = 0; t < TILE; ++t) {
    if (ox0 + t >= OW) break;
    vec4 r = requantize(acc[t], multiplier[cb], y_zero, lo, hi);
    for (int l = valid; l < 4; ++l) r[l] = 0.0;
    y[out_row + ox0 + t] = SVEC4(r);
  }
}
