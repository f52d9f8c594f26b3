#version 450
// linear: Y[..., N] = X[..., K] W^T + B, clamped, fp32 accumulation. The K axis is split across the
// workgroup: the SPLIT invocations along x take every SPLIT-th block of 4 k and their sums meet in
// shared memory; along y the workgroup holds 64 / SPLIT (row, output block) pairs (ops.h:
// linear_split). W packed per block of 4 outputs and per k (weight_layout.h). The K axis of X and the
// N axis of Y are the last axis: contiguous lanes when it is the packed axis (rank <= 2), one texel
// apart otherwise.
// spec 3: SPLIT (= local size x). params: rows, K, N, N blocks, K packed, N packed, act_min, act_max,
// view X, view Y.
#include "common.glsl"

layout(constant_id = 3) const int SPLIT = 64;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
TEXELS_IN(3, Wt);
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };

const int VX = 8, VY = VX + VIEW_WORDS;

shared vec4 partial[gl_WorkGroupSize.x * gl_WorkGroupSize.y];

void main() {
  int K = p[1], N = p[2], NB = p[3], KB = (K + 3) / 4;
  int part = int(gl_LocalInvocationID.x), slot = int(gl_LocalInvocationID.y);
  int pair = group_index() * int(gl_WorkGroupSize.y) + slot;
  bool in_range = pair < p[0] * NB;  // no early return: every invocation reaches the barriers
  int m = in_range ? pair / NB : 0, nb = pair % NB;
  int c[MAX_RANK];
  v_coords(VX, m * K, c);
  int xbase = v_offset(VX, c);
  vec4 acc = vec4(0.0);
  for (int kb = part; in_range && kb < KB; kb += SPLIT) {
    vec4 v = vec4(0.0);  // k past K: zero
    if (p[4] != 0) {
      v = texelFetch(X, (xbase >> 2) + kb);
    } else {
      for (int l = 0; l < 4 && 4 * kb + l < K; ++l) v[l] = FETCH(X, xbase + (4 * kb + l) * 4);
    }
    int wi = nb * K + 4 * kb;
    acc += texelFetch(Wt, wi) * v.x;
    if (4 * kb + 1 < K) acc += texelFetch(Wt, wi + 1) * v.y;
    if (4 * kb + 2 < K) acc += texelFetch(Wt, wi + 2) * v.z;
    if (4 * kb + 3 < K) acc += texelFetch(Wt, wi + 3) * v.w;
  }
  int lid = slot * SPLIT + part;
  partial[lid] = acc;
  barrier();
  for (int half_size = SPLIT / 2; half_size > 0; half_size /= 2) {
    if (part < half_size) partial[lid] += partial[lid + half_size];
    barrier();
  }
  if (part != 0 || !in_range) return;
  vec4 r = min(max(partial[lid] + vec4(bias[nb]), vec4(pf(6))), vec4(pf(7)));
  v_coords(VY, m * N + nb * 4, c);
  int ybase = v_offset(VY, c);
  if (p[5] != 0) {
    for (int l = N - nb * 4; l < 4; ++l) r[l] = 0.0;
    y[ybase >> 2] = SVEC4(r);
  } else {
    int pad = v_pad_after(VY, c);  // the same for every column: N is not the packed axis
    for (int l = 0; l < 4 && nb * 4 + l < N; ++l) STORE_PADDED(y, ybase + 4 * l, r[l], pad);
  }
}
