#version 450
// Row-major float32, or int8 (INT8 = 1: the integer values), from a graph input in staging -> packed
// layout. INT8 = 2: float32 quantized to int8 values on the way (quantize_value of
// lib/ops/int8_arithmetic.h), so that a quantize of a graph input reads it in full precision
// whatever the plan's. One invocation per texel.
// spec 3: INT8. params: texels, view of the destination; INT8 = 2: scale, zero point.
#include "common.glsl"

layout(constant_id = 3) const int INT8 = 0;

layout(std430, binding = 1) readonly buffer Src { uint src[]; };
layout(std430, binding = 2) writeonly buffer Dst { SVEC4 dst[]; };

const int V = 1;

float element(int i) {
  if (INT8 == 1) return float(bitfieldExtract(int(src[i >> 2]), (i & 3) * 8, 8));
  float x = uintBitsToFloat(src[i]);
  if (INT8 == 0) return x;
  float q = x / pf(V + VIEW_WORDS), zero_point = float(p[V + VIEW_WORDS + 1]);
  return roundEven(clamp(isnan(q) ? 0.0 : q, -128.0 - zero_point, 127.0 - zero_point)) + zero_point;
}

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
    if (first + l < d) value[l] = element(offset + l * packed_stride);
  dst[t] = SVEC4(value);
}
