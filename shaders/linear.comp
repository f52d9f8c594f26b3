#version 450
// linear: Y[..., N] = X[..., K] W^T + B, clamped. One invocation per row and block of 4 outputs;
// W packed per block of 4 outputs and per k (weight_layout.h), fp32 accumulation. The K axis of X
// and the N axis of Y are the last axis: contiguous lanes when it is the packed axis (rank <= 2),
// one texel apart otherwise.
// params: rows, K, N, N blocks, K packed, N packed, act_min, act_max, view X, view Y.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer X { SVEC4 x[]; };
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
layout(std430, binding = 3) readonly buffer Wt { SVEC4 w[]; };
layout(std430, binding = 4) readonly buffer Bias { SVEC4 bias[]; };

const int VX = 8, VY = VX + VIEW_WORDS;

void main() {
  int id = global_index();
  int K = p[1], N = p[2], NB = p[3];
  if (id >= p[0] * NB) return;
  int m = id / NB, nb = id % NB;
  int c[MAX_RANK];
  v_coords(VX, m * K, c);
  int xbase = v_offset(VX, c), xstep = p[4] != 0 ? 1 : 4;
  vec4 acc = vec4(bias[nb]);
  int wbase = nb * K;
  for (int k = 0; k < K; ++k) acc += vec4(w[wbase + k]) * LOAD(x, xbase + k * xstep);
  acc = min(max(acc, vec4(pf(6))), vec4(pf(7)));
  v_coords(VY, m * N + nb * 4, c);
  int ybase = v_offset(VY, c);
  if (p[5] != 0) {
    for (int l = N - nb * 4; l < 4; ++l) acc[l] = 0.0;
    y[ybase >> 2] = SVEC4(acc);
  } else {
    int pad = v_pad_after(VY, c);  // the same for every column: N is not the packed axis
    for (int l = 0; l < 4 && nb * 4 + l < N; ++l) STORE_PADDED(y, ybase + 4 * l, acc[l], pad);
  }
}
