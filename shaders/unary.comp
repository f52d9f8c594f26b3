#version 450
// Element-wise activations, and quantize / dequantize (int8 tensors are stored as floats holding
// their integer values: int8.glsl), one invocation per texel; padding lanes stay zero.
// spec 3: OP, a code of op_codes.h. params: texels, texel stride of the packed axis,
// blocks of the packed axis, its length, alpha, beta.
#include "common.glsl"
#include "math.glsl"

layout(constant_id = 3) const int OP = 0;

TEXELS_IN(1, X);
layout(std430, binding = 2) writeonly buffer Y { SVEC4 y[]; };

// The codes OP takes (op_codes.h, shared with the planner).
#define MT_UNARY_OP(op, CODE, value) const int CODE = value;
#include "op_codes.h"

void main() {
  int t = global_index();
  if (t >= p[0]) return;
  float alpha = pf(4), beta = pf(5);
  vec4 v = texelFetch(X, t);  // fp32 for most ops
  AVEC4 a = AVEC4(v);         // cheap ops in the storage precision (exact: v holds a stored value)
  vec4 r;
  if (OP == RELU) r = vec4(max(a, AVEC4(0)));
  else if (OP == CLAMP) r = vec4(clamp_nan(v, alpha, beta));
  else if (OP == SIGMOID) r = sigmoid(v);
  else if (OP == TANH) r = tanh_stable(v);
  else if (OP == HARDSWISH) r = vec4(a * clamp(a + AFLOAT(3), AVEC4(0), AVEC4(6)) / AFLOAT(6));
  else if (OP == HARDSIGMOID) r = clamp(alpha * v + beta, 0.0, 1.0);
  else if (OP == SILU) r = v * sigmoid(v);
  else if (OP == GELU) r = 0.5 * v * (1.0 + erf4(v * 0.70710678118654752));
  else if (OP == GELU_TANH) r = 0.5 * v * (1.0 + tanh_stable(0.79788456080286536 * (v + 0.044715 * v * v * v)));
  else if (OP == LEAKY_RELU) r = mix(alpha * v, v, greaterThanEqual(v, vec4(0)));
  else if (OP == ELU) r = mix(alpha * (exp(min(v, 0.0)) - 1.0), v, greaterThan(v, vec4(0)));
  else if (OP == EXP) r = exp(v);
  else if (OP == LOG) r = log(v);
  else if (OP == SQRT) r = sqrt(v);
  else if (OP == NEG) r = vec4(-a);
  else if (OP == ABS) r = vec4(abs(a));
  else if (OP == RECIPROCAL) r = 1.0 / v;
  else if (OP == FLOOR) r = floor(v);
  else if (OP == CEIL) r = ceil(v);
  else if (OP == ERF) r = erf4(v);
  else if (OP == SOFTPLUS) r = max(v, 0.0) + log(1.0 + exp(-abs(v)));
  else if (OP == LOGICAL_NOT) r = vec4(equal(v, vec4(0)));
  else if (OP == QUANTIZE) {  // quantize_value of lib/ops/int8_arithmetic.h: NaN becomes the zero point
    vec4 q = v / alpha;
    q = mix(q, vec4(0.0), isnan(q));
    r = roundEven(clamp(q, -128.0 - beta, 127.0 - beta)) + beta;
  } else if (OP == DEQUANTIZE) r = alpha * (v - beta);
  else r = v;
  if ((p[3] & 3) != 0) {  // padding lanes only where the packed axis is not a multiple of 4
    int block = (t / p[1]) % p[2];
    for (int l = p[3] - block * 4; l < 4; ++l) r[l] = 0.0;
  }
  y[t] = SVEC4(r);
}
