#version 450
// global_avg_pool / global_max_pool: one workgroup per texel plane (image and channel block) reduces
// all its spatial positions in fp32 (with PER_INVOCATION, for planes of few positions, one
// invocation does: a workgroup's barriers cost more than its work there); the int8 average (lib/ops/eval/quantized.cpp, values stored as
// floats: int8.glsl) sums x - x_zero, exact for up to 65536 positions (the planner's limit), and
// requantizes by x_scale / (count y_scale). spec 3: OP (0 avg, 1 max, 2 int8 avg).
// params: planes, spatial size; int8: x_zero, y_zero, multiplier, channel blocks, channels (padding
// lanes, non-zero after requantization, are zeroed).
#include "common.glsl"
#include "int8.glsl"

layout(constant_id = 3) const int OP = 0;
layout(constant_id = 4) const int PER_INVOCATION = 0;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };

shared vec4 partial[gl_WorkGroupSize.x];

vec4 combine(vec4 a, vec4 b) {
  if (OP != 1) return a + b;
  return mix(a, b, bvec4(uvec4(greaterThan(b, a)) | uvec4(isnan(b))));
}

// The result of plane `plane` from its reduction `acc`.
void finish(int plane, vec4 acc) {
  int size = p[1];
  if (OP == 2) {
    vec4 r = requantize(ivec4(acc), vec4(pf(4)), float(p[3]), -128.0, 127.0);
    for (int l = p[6] - (plane % p[5]) * 4; l < 4; ++l) r[l] = 0.0;
    y[plane] = SVEC4(r);
  } else {
    y[plane] = SVEC4(OP == 0 ? acc / float(size) : acc);
  }
}

void main() {
  int size = p[1];
  vec4 acc = OP == 1 ? vec4(-1.0 / 0.0) : vec4(0.0);
  float x_zero = OP == 2 ? float(p[2]) : 0.0;
  if (PER_INVOCATION == 1) {  // small planes: one invocation each, no barriers
    int plane = global_index();
    if (plane >= p[0]) return;
    for (int s = 0; s < size; ++s) acc = combine(acc, texelFetch(X, plane * size + s) - x_zero);
    finish(plane, acc);
    return;
  }
  int plane = group_index(), lid = int(gl_LocalInvocationID.x);
  if (plane >= p[0]) return;  // whole workgroup: no barrier is skipped by only some invocations
  int local_size = int(gl_WorkGroupSize.x);
  for (int s = lid; s < size; s += local_size) acc = combine(acc, texelFetch(X, plane * size + s) - x_zero);
  partial[lid] = acc;
  barrier();
  for (int half_size = local_size / 2; half_size > 0; half_size /= 2) {
    if (lid < half_size) partial[lid] = combine(partial[lid], partial[lid + half_size]);
    barrier();
  }
  if (lid == 0) finish(plane, partial[0]);
}
