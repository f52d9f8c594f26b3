// Functions GLSL lacks or computes unstably, in fp32.

// 1 / (1 + e^-x) without overflow for large |x|.
vec4 sigmoid(vec4 x) {
  vec4 e = exp(-abs(x));
  return mix(e / (1.0 + e), 1.0 / (1.0 + e), greaterThanEqual(x, vec4(0)));
}

vec4 tanh_stable(vec4 x) {
  vec4 e = exp(-2.0 * abs(x));
  return sign(x) * (1.0 - e) / (1.0 + e);
}

// erf from the Chebyshev-fitted erfc of Numerical Recipes (fractional error below 1.2e-7).
float erf1(float x) {
  float a = abs(x);
  float t = 1.0 / (1.0 + 0.5 * a);
  float y = t * exp(-a * a - 1.26551223 +
                    t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
                    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? 1.0 - y : y - 1.0;
}
vec4 erf4(vec4 x) { return vec4(erf1(x.x), erf1(x.y), erf1(x.z), erf1(x.w)); }

// clamp that lets NaN through and treats infinite bounds as none.
vec4 clamp_nan(vec4 x, float lo, float hi) { return min(max(x, vec4(lo)), vec4(hi)); }
