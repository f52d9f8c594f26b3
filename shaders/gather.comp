#version 450
// gather with constant indices: Y[o, i, q] = X[o, index[i], q] over flattened outer, index and inner
// ranges. params: count, outer, indices, inner, axis length, view Y, view X.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Index { int index[]; };

const int VY = 5, VX = VY + VIEW_WORDS;

void main() {
  int e = global_index();
  if (e >= p[0]) return;
  int indices = p[2], inner = p[3];
  int q = e % inner, i = (e / inner) % indices, o = e / (inner * indices);
  int c[MAX_RANK];
  v_coords(VX, (o * p[4] + index[i]) * inner + q, c);
  float value = LOAD(x, v_offset(VX, c));
  v_coords(VY, e, c);
  STORE_PADDED(y, v_offset(VY, c), value, v_pad_after(VY, c));
}
