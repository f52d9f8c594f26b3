#version 450
// 1x1 conv2d with stride 1 and no padding: a matrix product over the flattened pixels. Each
// invocation computes TILE consecutive pixels of one block of 4 output channels.
// spec 3: TILE. params: N, ICB, P (pixels), OCB, M, act_min, act_max.
#include "common.glsl"

layout(constant_id = 3) const int TILE = 4;

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Wt { SVEC4 w[]; };
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };
layout(std430, binding = 5) readonly buffer Ranges { int ranges[]; };

void main() {
  int ICB = p[1], P = p[2], OCB = p[3];
  int p0 = int(gl_GlobalInvocationID.x) * TILE, z = int(gl_GlobalInvocationID.y);
  if (p0 >= P || z >= p[0] * OCB) return;
  int n = z / OCB, ob = z % OCB;
  int count = min(TILE, P - p0);
  vec4 acc[TILE];
  for (int t = 0; t < TILE; ++t) acc[t] = vec4(bias[ob]);
  int first = ranges[3 * ob], ib_begin = ranges[3 * ob + 1], ib_end = ranges[3 * ob + 2];
  for (int ib = ib_begin; ib < ib_end; ++ib) {
    int wi = (first + ib - ib_begin) * 4;
    vec4 w0 = vec4(w[wi]), w1 = vec4(w[wi + 1]), w2 = vec4(w[wi + 2]), w3 = vec4(w[wi + 3]);
    int base = (n * ICB + ib) * P + p0;
    for (int t = 0; t < TILE; ++t) {
      if (t >= count) break;
      vec4 v = vec4(x[base + t]);
      acc[t] += w0 * v.x + w1 * v.y + w2 * v.z + w3 * v.w;
    }
  }
  float lo = pf(5), hi = pf(6);
  int valid = p[4] - ob * 4;
  int out_base = (n * OCB + ob) * P + p0;
  for (int t = 0; t < TILE; ++t) {
    if (t >= count) break;
    vec4 r = min(max(acc[t], vec4(lo)), vec4(hi));
    for (int l = valid; l < 4; ++l) r[l] = 0.0;
    y[out_base + t] = SVEC4(r);
  }
}
