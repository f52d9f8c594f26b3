#version 450
// conv2d on packed NCHW tensors: each invocation computes TILE neighbouring output pixels of one
// block of 4 output channels, reading each weight matrix once for all of them. Weights and ranges
// as kernels/vulkan/plan/weight_layout.h packs them; accumulation in fp32.
// spec 3-9: KH, KW, SH, SW, DH, DW, TILE. params: N, ICB, H, W, OCB, OH, OW, pad_top, pad_left, M,
// act_min, act_max.
#include "common.glsl"

layout(constant_id = 3) const int KH = 1;
layout(constant_id = 4) const int KW = 1;
layout(constant_id = 5) const int SH = 1;
layout(constant_id = 6) const int SW = 1;
layout(constant_id = 7) const int DH = 1;
layout(constant_id = 8) const int DW = 1;
layout(constant_id = 9) const int TILE = 4;

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Wt { SVEC4 w[]; };
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };
layout(std430, binding = 5) readonly buffer Ranges { int ranges[]; };

void main() {
  int ICB = p[1], H = p[2], W = p[3], OCB = p[4], OH = p[5], OW = p[6];
  int ox0 = int(gl_GlobalInvocationID.x) * TILE, oy = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  if (ox0 >= OW || oy >= OH || z >= p[0] * OCB) return;
  int n = z / OCB, ob = z % OCB;
  vec4 acc[TILE];
  for (int t = 0; t < TILE; ++t) acc[t] = vec4(bias[ob]);
  int first = ranges[3 * ob], ib_begin = ranges[3 * ob + 1], ib_end = ranges[3 * ob + 2];
  int iy0 = oy * SH - p[7], ix0 = ox0 * SW - p[8];
  for (int ib = ib_begin; ib < ib_end; ++ib) {
    int plane = (n * ICB + ib) * H;
    int wbase = (first + (ib - ib_begin) * KH * KW) * 4;
    for (int ky = 0; ky < KH; ++ky) {
      int iy = iy0 + ky * DH;
      if (iy < 0 || iy >= H) continue;
      int row = (plane + iy) * W;
      for (int kx = 0; kx < KW; ++kx) {
        int wi = wbase + (ky * KW + kx) * 4;
        vec4 w0 = vec4(w[wi]), w1 = vec4(w[wi + 1]), w2 = vec4(w[wi + 2]), w3 = vec4(w[wi + 3]);
        for (int t = 0; t < TILE; ++t) {
          int ix = ix0 + t * SW + kx * DW;
          if (ix < 0 || ix >= W) continue;
          vec4 v = vec4(x[row + ix]);
          acc[t] += w0 * v.x + w1 * v.y + w2 * v.z + w3 * v.w;
        }
      }
    }
  }
  float lo = pf(10), hi = pf(11);
  int valid = p[9] - ob * 4;
  int out_row = ((n * OCB + ob) * OH + oy) * OW;
  for (int t = 0; t < TILE; ++t) {
    if (ox0 + t >= OW) break;
    vec4 r = min(max(acc[t], vec4(lo)), vec4(hi));
    for (int l = valid; l < 4; ++l) r[l] = 0.0;
    y[out_row + ox0 + t] = SVEC4(r);
  }
}
