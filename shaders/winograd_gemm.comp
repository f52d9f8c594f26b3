#version 450
// Winograd F(2x2, 3x3), step 2 of 3: for each of the 16 positions, the product of the transformed
// weights U[position] (output blocks x input blocks of 4x4 matrices, packed at planning) and the
// transformed input V[position] (input blocks x tiles), written to M[position][image, output
// block][tile]. Each invocation computes TILE tiles of OBS output blocks, as shaders/conv2d.comp.
// spec 3-4: TILE, OBS. params: N, ICB, T (tiles), OCB.
#include "common.glsl"

layout(constant_id = 3) const int TILE = 4;
layout(constant_id = 4) const int OBS = 1;

TEXELS_IN(1, V);
layout(std430, binding = 2) writeonly buffer M { SVEC4 m[]; };
TEXELS_IN(3, U);

void main() {
  int N = p[0], ICB = p[1], T = p[2], OCB = p[3];
  int groups = (OCB + OBS - 1) / OBS;
  int t0 = int(gl_GlobalInvocationID.x) * TILE, z = int(gl_GlobalInvocationID.y), pos = int(gl_GlobalInvocationID.z);
  if (t0 >= T || z >= N * groups) return;
  int n = z / groups, ob0 = (z % groups) * OBS;
  int blocks = min(OBS, OCB - ob0), count = min(TILE, T - t0);
  vec4 acc[OBS * TILE];
  for (int k = 0; k < OBS * TILE; ++k) acc[k] = vec4(0.0);
  int vbase = (pos * N + n) * ICB * T + t0;
  for (int ib = 0; ib < ICB; ++ib) {
    vec4 vt[TILE];
    for (int t = 0; t < TILE; ++t) vt[t] = t < count ? texelFetch(V, vbase + ib * T + t) : vec4(0.0);
    for (int b = 0; b < OBS; ++b) {
      if (b >= blocks) break;
      int wi = ((pos * OCB + ob0 + b) * ICB + ib) * 4;
      vec4 w0 = texelFetch(U, wi), w1 = texelFetch(U, wi + 1), w2 = texelFetch(U, wi + 2), w3 = texelFetch(U, wi + 3);
      for (int t = 0; t < TILE; ++t) acc[b * TILE + t] += w0 * vt[t].x + w1 * vt[t].y + w2 * vt[t].z + w3 * vt[t].w;
    }
  }
  for (int b = 0; b < OBS; ++b) {
    if (b >= blocks) break;
    int mbase = ((pos * N + n) * OCB + ob0 + b) * T + t0;
    for (int t = 0; t < TILE; ++t) {
      if (t >= count) break;
      m[mbase + t] = SVEC4(acc[b * TILE + t]);
    }
  }
}
