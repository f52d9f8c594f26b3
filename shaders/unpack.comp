#version 450
// Packed layout -> row-major float32 (a graph output in staging). One invocation per element.
// params: element count, view of the source.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer Src { SVEC4 src[]; };
layout(std430, binding = 2) writeonly buffer Dst { float dst[]; };

const int V = 1;

void main() {
  int e = global_index();
  if (e >= p[0]) return;
  int c[MAX_RANK];
  v_coords(V, e, c);
  dst[e] = LOAD(src, v_offset(V, c));
}
