#version 450
// conv_transpose2d on packed NCHW tensors, as a gather: each output pixel sums the input pixels
// whose stride grid lands on it. Weights and ranges as for conv2d (weight_layout.h).
// spec 3-8: KH, KW, SH, SW, DH, DW. params: N, ICB, H, W, OCB, OH, OW, pad_top, pad_left, M,
// act_min, act_max.
#include "common.glsl"

layout(constant_id = 3) const int KH = 1;
layout(constant_id = 4) const int KW = 1;
layout(constant_id = 5) const int SH = 1;
layout(constant_id = 6) const int SW = 1;
layout(constant_id = 7) const int DH = 1;
layout(constant_id = 8) const int DW = 1;

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Wt { SVEC4 w[]; };
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };
layout(std430, binding = 5) readonly buffer Ranges { int ranges[]; };

void main() {
  int ICB = p[1], H = p[2], W = p[3], OCB = p[4], OH = p[5], OW = p[6];
  int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  if (ox >= OW || oy >= OH || z >= p[0] * OCB) return;
  int n = z / OCB, ob = z % OCB;
  vec4 acc = vec4(bias[ob]);
  int first = ranges[3 * ob], ib_begin = ranges[3 * ob + 1], ib_end = ranges[3 * ob + 2];
  for (int ky = 0; ky < KH; ++ky) {
    int ty = oy + p[7] - ky * DH;
    if (ty < 0 || ty % SH != 0 || ty / SH >= H) continue;
    int iy = ty / SH;
    for (int kx = 0; kx < KW; ++kx) {
      int tx = ox + p[8] - kx * DW;
      if (tx < 0 || tx % SW != 0 || tx / SW >= W) continue;
      int ix = tx / SW;
      for (int ib = ib_begin; ib < ib_end; ++ib) {
        int wi = (first + (ib - ib_begin) * KH * KW + ky * KW + kx) * 4;
        vec4 v = vec4(x[((n * ICB + ib) * H + iy) * W + ix]);
        acc += vec4(w[wi]) * v.x + vec4(w[wi + 1]) * v.y + vec4(w[wi + 2]) * v.z + vec4(w[wi + 3]) * v.w;
      }
    }
  }
  vec4 r = min(max(acc, vec4(pf(10))), vec4(pf(11)));
  for (int l = p[9] - ob * 4; l < 4; ++l) r[l] = 0.0;
  y[((n * OCB + ob) * OH + oy) * OW + ox] = SVEC4(r);
}
