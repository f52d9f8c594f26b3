// linear of int8 tensors (lib/ops/eval/quantized.cpp's arithmetic, equal to it): Y[..., N] =
// requantize(X[..., K] W^T + bias). The K axis is split across the workgroup: the SPLIT invocations
// along x take every SPLIT-th block of 4 k and their int32 sums meet in shared memory; along y the
// workgroup holds 64 / SPLIT (row, output block) pairs. Weights as pack_linear_weights_int8 packs
// them (word o of a 4x4 block: 4 k to output o), the bias with the input zero point folded in (as
// conv2d_int8.glsl). MT_INT8_DOT: dot4x8 on packed inputs; otherwise fp32 sums of unpacked weights,
// flushed into int32 every 256 blocks of k (1024 products of at most 2^14). The K axis of X and
// the N axis of Y are the last axis: contiguous lanes when it is the packed axis (rank <= 2), one
// texel apart otherwise.
// spec 3: SPLIT (= local size x). params: rows, K, N, N blocks, K packed, N packed, x_zero,
// y_zero, lo, hi, view X, view Y.
#include "common.glsl"
#include "int8.glsl"

layout(constant_id = 3) const int SPLIT = 64;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };
INTS_IN(3, Wt);  // a 4x4 block of int8 weights per ivec4 texel
layout(std430, binding = 4) readonly buffer Bias { ivec4 bias[]; };
layout(std430, binding = 5) readonly buffer Multipliers { vec4 multiplier[]; };

const int VX = 10, VY = VX + VIEW_WORDS;

shared ivec4 partial[gl_WorkGroupSize.x * gl_WorkGroupSize.y];

void main() {
  int K = p[1], N = p[2], NB = p[3], KB = (K + 3) / 4;
  int part = int(gl_LocalInvocationID.x), slot = int(gl_LocalInvocationID.y);
  int pair = group_index() * int(gl_WorkGroupSize.y) + slot;
  bool in_range = pair < p[0] * NB;  // no early return: every invocation reaches the barriers
  int m = in_range ? pair / NB : 0, nb = pair % NB;
  int c[MAX_RANK];
  v_coords(VX, m * K, c);
  int xbase = v_offset(VX, c), xstep = p[4] != 0 ? 1 : 4;
  float x_zero = float(p[6]);
  ivec4 acc = ivec4(0);
#ifndef MT_INT8_DOT
  vec4 sum = vec4(0.0);
  int since_flush = 0;
#endif
  for (int kb = part; in_range && kb < KB; kb += SPLIT) {
    vec4 v = vec4(x_zero);  // k past K: any value meets zero weights
    if (p[4] != 0) {
      v = texelFetch(X, (xbase >> 2) + kb);
    } else {
      for (int l = 0; l < 4 && 4 * kb + l < K; ++l) v[l] = FETCH(X, xbase + (4 * kb + l) * xstep);
    }
    ivec4 wq = texelFetch(Wt, nb * KB + kb);
#ifdef MT_INT8_DOT
    uint packed = pack_int8(v);
    acc += ivec4(dot4x8(packed, uint(wq.x)), dot4x8(packed, uint(wq.y)), dot4x8(packed, uint(wq.z)),
                 dot4x8(packed, uint(wq.w)));
#else
    sum += vec4(dot(v, unpack_int8(wq.x)), dot(v, unpack_int8(wq.y)), dot(v, unpack_int8(wq.z)),
                dot(v, unpack_int8(wq.w)));
    if (++since_flush == 256) {
      acc += ivec4(sum);
      sum = vec4(0.0);
      since_flush = 0;
    }
#endif
  }
#ifndef MT_INT8_DOT
  acc += ivec4(sum);
#endif
  int lid = slot * SPLIT + part;
  partial[lid] = acc;
  barrier();
  for (int half_size = SPLIT / 2; half_size > 0; half_size /= 2) {
    if (part < half_size) partial[lid] += partial[lid + half_size];
    barrier();
  }
  if (part != 0 || !in_range) return;
  vec4 r = requantize(partial[lid] + bias[nb], multiplier[nb], float(p[7]), float(p[8]), float(p[9]));
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
