#version 450
// Row-major float32 (a graph input in staging) -> packed layout. One invocation per texel.
// params: texels, view of the destination.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer Src { float src[]; };
layout(std430, binding = 2) writeonly buffer Dst { SVEC4 dst[]; };

const int V = 1;

void main() {
  int t = global_index();
  if (t >= p[0]) return;
  int rank = v_rank(V), packed = v_packed(V);
  // Coordinates of the texel (the packed axis counts blocks) and row-major strides of the source.
  int c[MAX_RANK];
  int rest = t;
  for (int a = rank - 1; a >= 0; --a) {
    int d = v_dim(V, a);
    int extent = a == packed ? (d + 3) / 4 : d;
    c[a] = rest % extent;
    rest /= extent;
  }
  int offset = 0, stride = 1, packed_stride = 1;
  for (int a = rank - 1; a >= 0; --a) {
    int ca = a == packed ? c[a] * 4 : c[a];
    offset += ca * stride;
    if (a == packed) packed_stride = stride;
    stride *= v_dim(V, a);
  }
  int first = c[packed] * 4, d = v_dim(V, packed);
  vec4 value = vec4(0.0);
  for (int l = 0; l < 4; ++l)
    if (first + l < d) value[l] = src[offset + l * packed_stride];
  dst[t] = SVEC4(value);
}
