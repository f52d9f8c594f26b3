#version 450
// conv2d on packed NCHW tensors: each invocation computes TILE neighbouring output pixels of OBS
// blocks of 4 output channels, so that each input texel it reads feeds 4 * OBS output channels and
// each weight texel TILE pixels. Invocations are laid out as (row tile, output row) along x and
// (image, group of OBS output blocks) along y, so a layer of few pixels (7x7) still fills a
// workgroup: the planner sizes the workgroup to the layer. Weights and ranges as
// kernels/vulkan/plan/weight_layout.h packs them; accumulation in fp32. OBS > 1 only when the
// blocks of an invocation read the same input blocks (group 1).
// spec 3-10: KH, KW, SH, SW, DH, DW, TILE, OBS. params: N, ICB, H, W, OCB, OH, OW, pad_top,
// pad_left, M, act_min, act_max.
#include "common.glsl"

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
TEXELS_IN(3, Wt);
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };
layout(std430, binding = 5) readonly buffer Ranges { int ranges[]; };

void main() {
  int ICB = p[1], H = p[2], W = p[3], OCB = p[4], OH = p[5], OW = p[6];
  int tiles = (OW + TILE - 1) / TILE;
  int i = int(gl_GlobalInvocationID.x), z = int(gl_GlobalInvocationID.y);
  int groups = (OCB + OBS - 1) / OBS;
  if (i >= tiles * OH || z >= p[0] * groups) return;
  int oy = i / tiles, ox0 = (i % tiles) * TILE;
  int n = z / groups, ob0 = (z % groups) * OBS;
  int blocks = min(OBS, OCB - ob0);
  vec4 acc[OBS * TILE];
  for (int b = 0; b < OBS; ++b)
    for (int t = 0; t < TILE; ++t) acc[b * TILE + t] = b < blocks ? vec4(bias[ob0 + b]) : vec4(0.0);
  // Every block of the invocation reads the input blocks of the first (OBS > 1 only for group 1).
  int ib_begin = ranges[3 * ob0 + 1], ib_end = ranges[3 * ob0 + 2];
  int wbase[OBS];  // each block's first weight texel
  for (int b = 0; b < OBS; ++b) wbase[b] = b < blocks ? ranges[3 * (ob0 + b)] * 4 : 0;
  int iy0 = oy * SH - p[7], ix0 = ox0 * SW - p[8];
  for (int ib = ib_begin; ib < ib_end; ++ib) {
    int plane = (n * ICB + ib) * H;
    for (int ky = 0; ky < KH; ++ky) {
      int iy = iy0 + ky * DH;
      if (iy < 0 || iy >= H) continue;
      int row = (plane + iy) * W;
      for (int kx = 0; kx < KW; ++kx) {
        vec4 v[TILE];
        for (int t = 0; t < TILE; ++t) {
          int ix = ix0 + t * SW + kx * DW;
          v[t] = ix >= 0 && ix < W ? texelFetch(X, row + ix) : vec4(0.0);
        }
        for (int b = 0; b < OBS; ++b) {
          if (b >= blocks) break;
          int wi = wbase[b] + (((ib - ib_begin) * KH + ky) * KW + kx) * 4;
          vec4 w0 = texelFetch(Wt, wi), w1 = texelFetch(Wt, wi + 1), w2 = texelFetch(Wt, wi + 2), w3 = texelFetch(Wt, wi + 3);
          for (int t = 0; t < TILE; ++t) acc[b * TILE + t] += w0 * v[t].x + w1 * v[t].y + w2 * v[t].z + w3 * v[t].w;
        }
      }
    }
  }
  float lo = pf(10), hi = pf(11);
  for (int b = 0; b < OBS; ++b) {
    if (b >= blocks) break;
    int ob = ob0 + b;
    int valid = p[9] - ob * 4;
    int out_row = ((n * OCB + ob) * OH + oy) * OW;
    for (int t = 0; t < TILE; ++t) {
      if (ox0 + t >= OW) break;
      vec4 r = min(max(acc[b * TILE + t], vec4(lo)), vec4(hi));
      for (int l = valid; l < 4; ++l) r[l] = 0.0;
      y[out_row + ox0 + t] = SVEC4(r);
    }
  }
}
