#version 450
// An int8 activation as a 256-entry table built at planning by the reference kernel (so each value
// is the reference's): y = table[x + 128], int8 values stored as floats (int8.glsl). One invocation
// per texel; padding lanes stay zero.
// params: texels, texel stride of the packed axis, blocks of the packed axis, its length.
#include "common.glsl"

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Table { int table[]; };

void main() {
  int t = global_index();
  if (t >= p[0]) return;
  ivec4 q = ivec4(texelFetch(X, t)) + 128;
  vec4 r = vec4(table[q.x], table[q.y], table[q.z], table[q.w]);
  int block = (t / p[1]) % p[2];
  int valid = p[3] - block * 4;
  for (int l = valid; l < 4; ++l) r[l] = 0.0;
  y[t] = SVEC4(r);
}
