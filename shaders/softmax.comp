#version 450
// softmax / log_softmax along one axis: one workgroup per row (every other coordinate fixed), the
// maximum and the sum of exponentials reduced in fp32 shared memory.
// spec 3: LOG (0 softmax, 1 log_softmax). params: rows, axis, axis length, view (input and output).
#include "common.glsl"

layout(constant_id = 3) const int LOG = 0;

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };

shared float partial[gl_WorkGroupSize.x];

const int V = 3;

float reduce_max(float value, int lid) {
  partial[lid] = value;
  barrier();
  for (int half_size = int(gl_WorkGroupSize.x) / 2; half_size > 0; half_size /= 2) {
    if (lid < half_size) partial[lid] = max(partial[lid], partial[lid + half_size]);
    barrier();
  }
  float result = partial[0];
  barrier();
  return result;
}

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
  int axis = p[1], L = p[2], local_size = int(gl_WorkGroupSize.x);
  int c[MAX_RANK];
  int rest = row;
  for (int a = v_rank(V) - 1; a >= 0; --a) {
    if (a == axis) {
      c[a] = 0;
      continue;
    }
    int d = v_dim(V, a);
    c[a] = rest % d;
    rest /= d;
  }
  float m = -1.0 / 0.0;
  for (int j = lid; j < L; j += local_size) {
    c[axis] = j;
    m = max(m, LOAD(x, v_offset(V, c)));
  }
  m = reduce_max(m, lid);
  float s = 0.0;
  for (int j = lid; j < L; j += local_size) {
    c[axis] = j;
    s += exp(LOAD(x, v_offset(V, c)) - m);
  }
  s = reduce_sum(s, lid);
  float log_s = log(s);
  for (int j = lid; j < L; j += local_size) {
    c[axis] = j;
    int o = v_offset(V, c);
    float v = LOAD(x, o) - m;
    float r = LOG == 1 ? v - log_s : exp(v) / s;
    STORE_PADDED(y, o, r, v_pad_after(V, c));
  }
}
