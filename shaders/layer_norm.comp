#version 450
// layer_norm over the trailing axes: one workgroup per row, mean and variance in fp32 (two passes).
// Scale and bias are fp32 arrays over the normalized axes (ones and zeros when absent).
// params: rows, inner (normalized count), epsilon, view (input and output).
#include "common.glsl"

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Scale { float scale[]; };
layout(std430, binding = 4) readonly buffer Bias { float bias[]; };

shared float partial[gl_WorkGroupSize.x];

const int V = 3;

float reduce_sum(float value, int lid) {
  partial[lid] = value;
  barrier();
  for (int half_size = int(gl_WorkGroupSize.x) / 2; half_size > 0; half_size /= 2) {
    if (lid < half_size) partial[lid] += partial[lid + half_size];
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
}

void main() {
  int row = group_index(), lid = int(gl_LocalInvocationID.x);
  if (row >= p[0]) return;
  int inner = p[1], local_size = int(gl_WorkGroupSize.x);
  int c[MAX_RANK];
  float s = 0.0;
  for (int i = lid; i < inner; i += local_size) {
    v_coords(V, row * inner + i, c);
    s += LOAD(x, v_offset(V, c));
  }
  float mean = reduce_sum(s, lid) / float(inner);
  float q = 0.0;
  for (int i = lid; i < inner; i += local_size) {
    v_coords(V, row * inner + i, c);
    float d = LOAD(x, v_offset(V, c)) - mean;
    q += d * d;
  }
  float rstd = 1.0 / sqrt(reduce_sum(q, lid) / float(inner) + pf(2));
  for (int i = lid; i < inner; i += local_size) {
    v_coords(V, row * inner + i, c);
    int o = v_offset(V, c);
    float r = (LOAD(x, o) - mean) * rstd * scale[i] + bias[i];
    STORE_PADDED(y, o, r, v_pad_after(V, c));
  }
}
