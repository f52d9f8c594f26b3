#version 450
// Depthwise conv2d (group == C == M): each channel filtered by its own kernel, 4 channels per texel.
// Each invocation computes TILE neighbouring output pixels of one channel block, loading each input
// texel of a kernel row once.
// spec 3-9: KH, KW, SH, SW, DH, DW, TILE. params: N, CB, H, W, OH, OW, pad_top, pad_left, C,
// act_min, act_max.
#include "common.glsl"

layout(constant_id = 3) const int KH = 1;
layout(constant_id = 4) const int KW = 1;
layout(constant_id = 5) const int SH = 1;
layout(constant_id = 6) const int SW = 1;
layout(constant_id = 7) const int DH = 1;
layout(constant_id = 8) const int DW = 1;
layout(constant_id = 9) const int TILE = 4;
const int SPAN = (TILE - 1) * SW + (KW - 1) * DW + 1;  // input columns the TILE pixels of a row read

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
TEXELS_IN(3, Wt);
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };

void main() {
  int CB = p[1], H = p[2], W = p[3], OH = p[4], OW = p[5];
  // One invocation per (image and channel block, output row, tile of the row), in that order: a flat
  // grid keeps every lane busy whatever the layer's shape (7x7 ones too).
  int tiles = (OW + TILE - 1) / TILE, i = global_index();
  if (i >= tiles * OH * p[0] * CB) return;
  int ox0 = (i % tiles) * TILE, oy = (i / tiles) % OH, z = i / (tiles * OH);
  int cb = z % CB;
  vec4 acc[TILE];
  for (int t = 0; t < TILE; ++t) acc[t] = vec4(bias[cb]);
  int iy0 = oy * SH - p[6], ix0 = ox0 * SW - p[7];
  for (int ky = 0; ky < KH; ++ky) {
    int iy = iy0 + ky * DH;
    if (iy < 0 || iy >= H) continue;
    int row = (z * H + iy) * W;
    // Each input texel of the row is loaded once and feeds every (tap, pixel) that reads it.
    vec4 v[SPAN];
    for (int s = 0; s < SPAN; ++s) v[s] = ix0 + s >= 0 && ix0 + s < W ? texelFetch(X, row + ix0 + s) : vec4(0.0);
    for (int kx = 0; kx < KW; ++kx) {
      vec4 wv = texelFetch(Wt, (cb * KH + ky) * KW + kx);
      for (int t = 0; t < TILE; ++t) acc[t] += wv * v[t * SW + kx * DW];
    }
  }
  float lo = pf(9), hi = pf(10);
  int valid = p[8] - cb * 4;
  int out_row = (z * OH + oy) * OW;
  for (int t = 0; t < TILE; ++t) {
    if (ox0 + t >= OW) break;
    vec4 r = min(max(acc[t], vec4(lo)), vec4(hi));
    for (int l = valid; l < 4; ++l) r[l] = 0.0;
    y[out_row + ox0 + t] = SVEC4(r);
  }
}
