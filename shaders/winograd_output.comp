#version 450
// Winograd F(2x2, 3x3), step 3 of 3: the output transform. Each invocation reads the 16 texels of
// one tile of one output block from M, computes the 2x2 outputs A^T m A, adds the bias, clamps
// (a fused activation) and writes the outputs inside the image; lanes past M are written as zero.
// params: N, OCB, TH, TW, OH, OW, M (output channels), act_min, act_max.
#include "common.glsl"

TEXELS_IN(1, Mt);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Bias { SVEC4 bias[]; };

void main() {
  int planes = p[0] * p[1], OCB = p[1], TW = p[3], T = p[2] * p[3], OH = p[4], OW = p[5];
  int t = int(gl_GlobalInvocationID.x), z = int(gl_GlobalInvocationID.y);
  if (t >= T || z >= planes) return;
  int stride = planes * T, base = z * T + t;
  // A^T m (rows), then (A^T m) A (columns); A^T = [1 1 1 0; 0 1 -1 -1].
  vec4 s0[4], s1[4];
  for (int c = 0; c < 4; ++c) {
    vec4 m0 = texelFetch(Mt, c * stride + base), m1 = texelFetch(Mt, (4 + c) * stride + base);
    vec4 m2 = texelFetch(Mt, (8 + c) * stride + base), m3 = texelFetch(Mt, (12 + c) * stride + base);
    s0[c] = m0 + m1 + m2;
    s1[c] = m1 - m2 - m3;
  }
  int ob = z % OCB;
  vec4 b = vec4(bias[ob]), lo = vec4(pf(7)), hi = vec4(pf(8));
  vec4 r[4];
  r[0] = s0[0] + s0[1] + s0[2];
  r[1] = s0[1] - s0[2] - s0[3];
  r[2] = s1[0] + s1[1] + s1[2];
  r[3] = s1[1] - s1[2] - s1[3];
  int valid = p[6] - ob * 4;
  int oy0 = (t / TW) * 2, ox0 = (t % TW) * 2;
  for (int k = 0; k < 4; ++k) {
    int oy = oy0 + k / 2, ox = ox0 + k % 2;
    if (oy >= OH || ox >= OW) continue;
    vec4 o = min(max(r[k] + b, lo), hi);
    for (int l = valid; l < 4; ++l) o[l] = 0.0;
    y[(z * OH + oy) * OW + ox] = SVEC4(o);
  }
}
