#version 450
// resize of H and W of packed NCHW tensors by per-axis taps computed at planning (lib/ops/
// resize_coords.h: nearest 1 tap, linear 2, cubic 4), one invocation per output texel.
// Taps: per output row then per output column, 9 words: count, 4 indices, 4 weights (float bits).
// params: planes (N * channel blocks), H, W, OH, OW.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Taps { int taps[]; };

void main() {
  int H = p[1], W = p[2], OH = p[3], OW = p[4];
  int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y), plane = int(gl_GlobalInvocationID.z);
  if (ox >= OW || oy >= OH || plane >= p[0]) return;
  int ty = oy * 9, tx = (OH + ox) * 9;
  vec4 acc = vec4(0.0);
  for (int i = 0; i < taps[ty]; ++i) {
    int row = (plane * H + taps[ty + 1 + i]) * W;
    float wy = intBitsToFloat(taps[ty + 5 + i]);
    vec4 line = vec4(0.0);
    for (int j = 0; j < taps[tx]; ++j)
      line += intBitsToFloat(taps[tx + 5 + j]) * vec4(x[row + taps[tx + 1 + j]]);
    acc += wy * line;
  }
  y[(plane * OH + oy) * OW + ox] = SVEC4(acc);
}
