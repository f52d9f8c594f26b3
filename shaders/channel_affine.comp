#version 450
// y = x * scale[c] + shift[c] per channel (unfused batch_norm), one invocation per texel of an
// [N, C, ...] tensor. params: texels, texel stride of the channel axis, channel blocks.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Scale { SVEC4 scale[]; };
layout(std430, binding = 4) readonly buffer Shift { SVEC4 shift[]; };

void main() {
  int t = global_index();
  if (t >= p[0]) return;
  int block = (t / p[1]) % p[2];
  // Padding lanes: scale and shift are zero there.
  y[t] = SVEC4(AVEC4(x[t]) * AVEC4(scale[block]) + AVEC4(shift[block]));
}
