#version 450
// 1x1 conv2d with stride 1 and no padding: a matrix product over the flattened pixels. Each
// invocation computes TILE consecutive pixels of OBS blocks of 4 output channels, so each input
// texel it reads feeds 4 * OBS output channels (OBS > 1 only for group 1, where every block reads
// every input block). spec 3-4: TILE, OBS. params: N, ICB, P (pixels), OCB, M, act_min, act_max.
#include "common.glsl"

layout(constant_id = 3) const int TILE = 4;
layout(constant_id = 4) const int OBS = 1;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
TEXELS_IN(3, Wt);
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };
layout(std430, binding = 5) readonly buffer Ranges { int ranges[]; };

void main() {
  int ICB = p[1], P = p[2], OCB = p[3];
  int groups = (OCB + OBS - 1) / OBS;
  int p0 = int(gl_GlobalInvocationID.x) * TILE, z = int(gl_GlobalInvocationID.y);
  if (p0 >= P || z >= p[0] * groups) return;
  int n = z / groups, ob0 = (z % groups) * OBS;
  int blocks = min(OBS, OCB - ob0), count = min(TILE, P - p0);
  vec4 acc[OBS * TILE];
  for (int b = 0; b < OBS; ++b)
    for (int t = 0; t < TILE; ++t) acc[b * TILE + t] = b < blocks ? vec4(bias[ob0 + b]) : vec4(0.0);
  int ib_begin = ranges[3 * ob0 + 1], ib_end = ranges[3 * ob0 + 2];
  int wbase[OBS];  // each block's first weight texel
  for (int b = 0; b < OBS; ++b) wbase[b] = b < blocks ? ranges[3 * (ob0 + b)] * 4 : 0;
  for (int ib = ib_begin; ib < ib_end; ++ib) {
    int base = (n * ICB + ib) * P + p0;
    vec4 v[TILE];
    for (int t = 0; t < TILE; ++t) v[t] = t < count ? texelFetch(X, base + t) : vec4(0.0);
    for (int b = 0; b < OBS; ++b) {
      if (b >= blocks) break;
      int wi = wbase[b] + (ib - ib_begin) * 4;
      vec4 w0 = texelFetch(Wt, wi), w1 = texelFetch(Wt, wi + 1), w2 = texelFetch(Wt, wi + 2), w3 = texelFetch(Wt, wi + 3);
      for (int t = 0; t < TILE; ++t) acc[b * TILE + t] += w0 * v[t].x + w1 * v[t].y + w2 * v[t].z + w3 * v[t].w;
    }
  }
  float lo = pf(5), hi = pf(6);
  for (int b = 0; b < OBS; ++b) {
    if (b >= blocks) break;
    int ob = ob0 + b;
    int valid = p[4] - ob * 4;
    int out_base = (n * OCB + ob) * P + p0;
    for (int t = 0; t < TILE; ++t) {
      if (t >= count) break;
      vec4 r = min(max(acc[b * TILE + t], vec4(lo)), vec4(hi));
      for (int l = valid; l < 4; ++l) r[l] = 0.0;
      y[out_base + t] = SVEC4(r);
    }
  }
}
