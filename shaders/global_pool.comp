#version 450
// global_avg_pool / global_max_pool: one workgroup per texel plane (image and channel block) reduces
// all its spatial positions in fp32. spec 3: OP (0 avg, 1 max). params: planes, spatial size.
#include "common.glsl"

layout(constant_id = 3) const int OP = 0;

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };

shared vec4 partial[gl_WorkGroupSize.x];

vec4 combine(vec4 a, vec4 b) {
  if (OP == 0) return a + b;
  return mix(a, b, bvec4(uvec4(greaterThan(b, a)) | uvec4(isnan(b))));
}

void main() {
  int plane = group_index(), lid = int(gl_LocalInvocationID.x), size = p[1];
  if (plane >= p[0]) return;  // whole workgroup: no barrier is skipped by only some invocations
  int local_size = int(gl_WorkGroupSize.x);
  vec4 acc = OP == 0 ? vec4(0.0) : vec4(-1.0 / 0.0);
  for (int s = lid; s < size; s += local_size) acc = combine(acc, vec4(x[plane * size + s]));
  partial[lid] = acc;
  barrier();
  for (int half_size = local_size / 2; half_size > 0; half_size /= 2) {
    if (lid < half_size) partial[lid] = combine(partial[lid], partial[lid + half_size]);
    barrier();
  }
  if (lid == 0) y[plane] = SVEC4(OP == 0 ? partial[0] / float(size) : partial[0]);
}
