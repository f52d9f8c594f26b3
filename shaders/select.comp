#version 450
// where: y = condition != 0 ? x : z (bool tensors are 0.0 / 1.0 here), numpy broadcasting of all
// three. One invocation per output element. params: count, view Y, view C, view X, view Z (C, X
// and Z aligned to Y's rank).
#include "common.glsl"

layout(std430, binding = 1) readonly buffer C { SVEC4 cond[]; };
layout(std430, binding = 2) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 3) readonly buffer Z { SVEC4 z[]; };
layout(std430, binding = 4) writeonly buffer Y { SVEC4 y[]; };

const int VY = 1, VC = VY + VIEW_WORDS, VX = VC + VIEW_WORDS, VZ = VX + VIEW_WORDS;

void main() {
  int i = global_index();
  if (i >= p[0]) return;
  int c[MAX_RANK];
  v_coords(VY, i, c);
  float r = LOAD(cond, v_offset(VC, c)) != 0.0 ? LOAD(x, v_offset(VX, c)) : LOAD(z, v_offset(VZ, c));
  STORE_PADDED(y, v_offset(VY, c), r, v_pad_after(VY, c));
}
