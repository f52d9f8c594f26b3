#version 450
// Packed layout -> row-major float32 (a graph output in staging), one invocation per element; or,
// with INT8 = 1, row-major int8 (the values, integers already), one invocation per 4 elements (one
// 32-bit word, so that no two invocations write the same word).
// spec 3: INT8. params: element count, view of the source.
#include "common.glsl"

layout(constant_id = 3) const int INT8 = 0;

layout(std430, binding = 1) readonly buffer Src { SVEC4 src[]; };
layout(std430, binding = 2) writeonly buffer Dst { uint dst[]; };

const int V = 1;

void main() {
  int e = global_index(), count = p[0];
  int c[MAX_RANK];
  if (INT8 == 0) {
    if (e >= count) return;
    v_coords(V, e, c);
    dst[e] = floatBitsToUint(LOAD(src, v_offset(V, c)));
    return;
  }
  if (4 * e >= count) return;
  uint word = 0u;
  for (int l = 0; l < 4 && 4 * e + l < count; ++l) {
    v_coords(V, 4 * e + l, c);
    word |= uint(int(LOAD(src, v_offset(V, c))) & 255) << (8 * l);
  }
  dst[e] = word;
}
