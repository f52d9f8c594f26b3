#version 450
// Element-wise binary ops with numpy broadcasting and a fused clamp; comparisons and boolean ops
// give 1.0 or 0.0 (bool tensors). Also add and mul of int8 operands (lib/ops/eval/quantized*.cpp's
// arithmetic; int8 values stored as floats, int8.glsl), whose act_min / act_max are the int8
// bounds: rounding then clamping to integer bounds equals the reference's clamping then rounding.
// spec 3: OP, spec 4: MODE (0: one invocation per output texel, operands stored with the output's
// rank and packed axis; 1: one invocation per element, any operand ranks), spec 5-6: how MODE 0
// finds each operand's texel (A_KIND, B_KIND: 0 from the output coordinates, 1 the output's own
// index: same shape, 2 the output's channel block: a per-channel operand such as [1, C, 1, 1]),
// so that the common cases skip the per-axis divisions.
// params: count, act_min, act_max, view Y, view A, view B (A and B aligned to Y's rank); int8 ops
// also A zero point, B zero point, A multiplier (add: sa / sy; mul: sa sb / sy), B multiplier
// (add: sb / sy), Y zero point.
#include "common.glsl"
#include "int8.glsl"

layout(constant_id = 3) const int OP = 0;
layout(constant_id = 4) const int MODE = 0;
layout(constant_id = 5) const int A_KIND = 0;
layout(constant_id = 6) const int B_KIND = 0;

TEXELS_IN(1, A);
TEXELS_IN(2, B);
layout(std430, binding = 3) writeonly buffer Y { SVEC4 y[]; };

// The codes OP takes (op_codes.h, shared with the planner).
#define MT_BINARY_OP(op, CODE, value) const int CODE = value;
#include "op_codes.h"

const int VY = 3, VA = VY + VIEW_WORDS, VB = VA + VIEW_WORDS, Q = VB + VIEW_WORDS;

// std::pow's answers where GLSL's pow is undefined (negative bases, zero).
float pow1(float x, float e) {
  if (x == 0.0) return e > 0.0 ? 0.0 : (e == 0.0 ? 1.0 : 1.0 / 0.0);
  if (x > 0.0) return pow(x, e);
  if (e != floor(e)) return 0.0 / 0.0;
  float r = pow(-x, e);
  return mod(e, 2.0) == 1.0 ? -r : r;
}

vec4 apply(vec4 x, vec4 z) {
  if (OP == ADD_INT8) {  // round_half_even(sa / sy (a - za) + sb / sy (b - zb)) + zy, in fp32
    precise vec4 v = pf(Q + 2) * (x - float(p[Q])) + pf(Q + 3) * (z - float(p[Q + 1]));
    return roundEven(v) + float(p[Q + 4]);
  }
  if (OP == MUL_INT8) {  // the exact product requantized
    precise vec4 v = (x - float(p[Q])) * (z - float(p[Q + 1])) * pf(Q + 2);
    return roundEven(v) + float(p[Q + 4]);
  }
  if (OP == ADD) return vec4(AVEC4(x) + AVEC4(z));
  if (OP == SUB) return vec4(AVEC4(x) - AVEC4(z));
  if (OP == MUL) return vec4(AVEC4(x) * AVEC4(z));
  if (OP == DIV) return x / z;
  if (OP == POW) return vec4(pow1(x.x, z.x), pow1(x.y, z.y), pow1(x.z, z.z), pow1(x.w, z.w));
  if (OP == MAX) return vec4(max(AVEC4(x), AVEC4(z)));
  if (OP == MIN) return vec4(min(AVEC4(x), AVEC4(z)));
  if (OP == EQUAL) return vec4(equal(x, z));
  if (OP == LESS) return vec4(lessThan(x, z));
  if (OP == LESS_OR_EQUAL) return vec4(lessThanEqual(x, z));
  if (OP == GREATER) return vec4(greaterThan(x, z));
  if (OP == GREATER_OR_EQUAL) return vec4(greaterThanEqual(x, z));
  if (OP == LOGICAL_AND) return vec4(notEqual(x, vec4(0))) * vec4(notEqual(z, vec4(0)));
  if (OP == LOGICAL_OR) return max(vec4(notEqual(x, vec4(0))), vec4(notEqual(z, vec4(0))));
  if (OP == LOGICAL_XOR) return abs(vec4(notEqual(x, vec4(0))) - vec4(notEqual(z, vec4(0))));
  return mix(z * x, x, greaterThanEqual(x, vec4(0)));  // PRELU: z is the slope
}

// The texel of operand view v at output texel coordinates c (the packed axis counting blocks); an
// operand whose packed axis has length 1 is broadcast over the 4 lanes.
int operand_texel(int v, int c[MAX_RANK]) {
  int texel = 0;
  for (int a = 0; a < p[v]; ++a) texel += (p[v + 2 + a] == 1 ? 0 : c[a]) * p[v + 8 + a];
  return texel;
}

void main() {
  int i = global_index();
  if (i >= p[0]) return;
  float lo = pf(1), hi = pf(2);
  int c[MAX_RANK];
  if (MODE == 0) {
    int packed = v_packed(VY), blocks = (v_dim(VY, packed) + 3) / 4;
    bool padded = (v_dim(VY, packed) & 3) != 0;
    int block = 0;  // the output texel's channel block, where needed
    if (A_KIND == 0 || B_KIND == 0 || padded) {
      int rest = i;
      for (int ax = v_rank(VY) - 1; ax >= 0; --ax) {
        int d = v_dim(VY, ax);
        int extent = ax == packed ? blocks : d;
        c[ax] = rest % extent;
        rest /= extent;
      }
      block = c[packed];
    } else if (A_KIND == 2 || B_KIND == 2) {
      int q = i / p[VY + 8 + packed];  // texels of the axes after the packed one
      block = q < blocks ? q : q % blocks;
    }
    int ta = A_KIND == 1 ? i : A_KIND == 2 ? block * p[VA + 8 + packed] : operand_texel(VA, c);
    int tb = B_KIND == 1 ? i : B_KIND == 2 ? block * p[VB + 8 + packed] : operand_texel(VB, c);
    vec4 x = texelFetch(A, ta), z = texelFetch(B, tb);
    if (v_dim(VA, packed) == 1) x = x.xxxx;
    if (v_dim(VB, packed) == 1) z = z.xxxx;
    vec4 r = min(max(apply(x, z), vec4(lo)), vec4(hi));
    if (padded)
      for (int l = v_dim(VY, packed) - block * 4; l < 4; ++l) r[l] = 0.0;
    y[i] = SVEC4(r);
  } else {
    v_coords(VY, i, c);
    float x = FETCH(A, v_offset(VA, c)), z = FETCH(B, v_offset(VB, c));
    float r = min(max(apply(vec4(x), vec4(z)).x, lo), hi);
    STORE_PADDED(y, v_offset(VY, c), r, v_pad_after(VY, c));
  }
}
