#version 450
// Depthwise conv2d (group == C == M): each channel filtered by its own kernel, 4 channels per texel.
// Each invocation computes TILE neighbouring output pixels of one channel block.
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

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Wt { SVEC4 w[]; };
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };

void main() {
  int CB = p[1], H = p[2], W = p[3], OH = p[4], OW = p[5];
  int ox0 = int(gl_GlobalInvocationID.x) * TILE, oy = int(gl_GlobalInvocationID.y), z = int(gl_GlobalInvocationID.z);
  if (ox0 >= OW || oy >= OH || z >= p[0] * CB) return;
  int cb = z % CB;
  vec4 acc[TILE];
  for (int t = 0; t < TILE; ++t) acc[t] = vec4(bias[cb]);
  int iy0 = oy * SH - p[6], ix0 = ox0 * SW - p[7];
  for (int ky = 0; ky < KH; ++ky) {
    int iy = iy0 + ky * DH;
    if (iy < 0 || iy >= H) continue;
    int row = (z * H + iy) * W;
    for (int kx = 0; kx < KW; ++kx) {
      vec4 wv = vec4(w[(cb * KH + ky) * KW + kx]);
      for (int t = 0; t < TILE; ++t) {
        int ix = ix0 + t * SW + kx * DW;
        if (ix < 0 || ix >= W) continue;
        acc[t] += wv * vec4(x[row + ix]);
      }
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
