#version 450
// matmul with numpy semantics: Y[b, m, n] = sum_k A[b, m, k] B[b, k, n], batch axes broadcast (views
// aligned to Y's rank, 1-D operands seen with a unit axis). One invocation per (batch, row, block of
// 4 columns), fp32 accumulation.
// params: invocations, M, K, N, N blocks, view A, view B, view Y.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer A { SVEC4 a[]; };
layout(std430, binding = 2) readonly buffer B { SVEC4 b[]; };
layout(std430, binding = 3) writeonly buffer Y { SVEC4 y[]; };

const int VA = 5, VB = VA + VIEW_WORDS, VY = VB + VIEW_WORDS;

// Offset step of coordinate k along `axis` of view v (k's own contribution, as v_offset computes it).
int axis_term(int v, int axis, int k) {
  int stride = p[v + 8 + axis];
  return axis == v_packed(v) ? (k >> 2) * stride * 4 + (k & 3) : k * stride * 4;
}

void main() {
  int id = global_index();
  if (id >= p[0]) return;
  int M = p[1], K = p[2], N = p[3], NB = p[4];
  int rank = v_rank(VY);
  int nb = id % NB, m = (id / NB) % M, batch = id / (NB * M);
  int c[MAX_RANK];
  for (int ax = 0; ax < MAX_RANK; ++ax) c[ax] = 0;
  for (int ax = rank - 3; ax >= 0; --ax) {
    int d = v_dim(VY, ax);
    c[ax] = batch % d;
    batch /= d;
  }
  int row_axis = rank - 2, col_axis = rank - 1;
  c[row_axis] = m;
  c[col_axis] = 0;
  int abase = v_offset(VA, c);  // A[b, m, 0]
  c[row_axis] = 0;
  int bbase = v_offset(VB, c);  // B[b, 0, 0]
  int bcol[4];
  for (int l = 0; l < 4; ++l) bcol[l] = axis_term(VB, col_axis, min(nb * 4 + l, N - 1));
  vec4 acc = vec4(0.0);
  for (int k = 0; k < K; ++k) {
    float av = LOAD(a, abase + axis_term(VA, col_axis, k));
    int brow = bbase + axis_term(VB, row_axis, k);
    acc += av * vec4(LOAD(b, brow + bcol[0]), LOAD(b, brow + bcol[1]), LOAD(b, brow + bcol[2]), LOAD(b, brow + bcol[3]));
  }
  c[row_axis] = m;
  for (int l = 0; l < 4 && nb * 4 + l < N; ++l) {
    c[col_axis] = nb * 4 + l;
    STORE_PADDED(y, v_offset(VY, c), acc[l], v_pad_after(VY, c));
  }
}
