#version 450
// reduce_mean / sum / max / min over any axes: one workgroup per output element, fp32 partials in
// shared memory. spec 3: OP (0 mean, 1 sum, 2 max, 3 min).
// params: outputs, reduced count R, kept axis count, reduced axis count, kept axes[6], reduced
// axes[6], view X, view Y.
#include "common.glsl"

layout(constant_id = 3) const int OP = 0;

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };

shared float partial[gl_WorkGroupSize.x];

const int VX = 16, VY = VX + VIEW_WORDS;

float combine(float a, float b) {
  if (OP <= 1) return a + b;
  if (isnan(b)) return b;
  return OP == 2 ? max(a, b) : min(a, b);
}

void main() {
  int e = group_index(), lid = int(gl_LocalInvocationID.x);
  if (e >= p[0]) return;
  int R = p[1], kept = p[2], reduced = p[3], local_size = int(gl_WorkGroupSize.x);
  int c[MAX_RANK];
  for (int a = 0; a < MAX_RANK; ++a) c[a] = 0;
  int rest = e;
  for (int k = kept - 1; k >= 0; --k) {
    int axis = p[4 + k], d = v_dim(VX, axis);
    c[axis] = rest % d;
    rest /= d;
  }
  float acc = OP <= 1 ? 0.0 : (OP == 2 ? -1.0 / 0.0 : 1.0 / 0.0);
  for (int r = lid; r < R; r += local_size) {
    int rr = r;
    for (int k = reduced - 1; k >= 0; --k) {
      int axis = p[10 + k], d = v_dim(VX, axis);
      c[axis] = rr % d;
      rr /= d;
    }
    acc = combine(acc, LOAD(x, v_offset(VX, c)));
  }
  partial[lid] = acc;
  barrier();
  for (int half_size = local_size / 2; half_size > 0; half_size /= 2) {
    if (lid < half_size) partial[lid] = combine(partial[lid], partial[lid + half_size]);
    barrier();
  }
  if (lid == 0) {
    float result = OP == 0 ? partial[0] / float(R) : partial[0];
    int co[MAX_RANK];
    v_coords(VY, e, co);
    STORE_PADDED(y, v_offset(VY, co), result, v_pad_after(VY, co));
  }
}
