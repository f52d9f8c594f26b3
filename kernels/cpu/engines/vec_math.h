// Branch-free float math (exp, expm1, tanh, erf, sigmoid) written so that GCC and Clang vectorise
// loops over them: selects instead of branches, no library calls. Accurate to a few ulp (erf:
// 2e-7 absolute), which is well inside the tolerances the op harness checks.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace mt::cpu::vm {

// exp(x): x = n ln2 + r with |r| <= ln2/2, exp(r) by its degree-7 Taylor polynomial.
inline float exp(float x) {
  float clamped = x < -87.33654f ? -87.33654f : x;
  clamped = clamped > 88.37626f ? 88.37626f : clamped;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the mantissa
  const float t = clamped * 1.44269504f + shifter;
  const float n = t - shifter;
  const float r = (clamped - n * 0.693145752f) - n * 1.42860677e-6f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t exponent = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(shifter);
  const float scale = std::bit_cast<float>((exponent + 127) << 23);
  float y = p * scale;
  y = x > 88.72283f ? std::numeric_limits<float>::infinity() : y;
  y = x < -87.33654f ? 0.0f : y;
  return x != x ? x : y;  // NaN stays NaN
}

// exp(x) - 1 without cancellation near 0.
inline float expm1(float x) {
  float p = 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  p = p * x * x + x;
  return std::fabs(x) < 0.5f ? p : exp(x) - 1.0f;
}

inline float tanh(float x) {
  float a = std::fabs(x);
  a = a > 9.0f ? 9.0f : a;  // tanh(9) rounds to 1 in float
  const float e = expm1(2.0f * a);
  const float y = e / (e + 2.0f);
  return std::copysign(y, x);
}

inline float sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

// erf: Taylor series near 0, Abramowitz & Stegun 7.1.26 elsewhere.
inline float erf(float x) {
  const float a = std::fabs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float far = 1.0f - p * t * exp(-a * a);
  const float x2 = a * a;
  float s = 1.0f / 216.0f;
  s = s * x2 - 1.0f / 42.0f;
  s = s * x2 + 1.0f / 10.0f;
  s = s * x2 - 1.0f / 3.0f;
  s = s * x2 + 1.0f;
  const float near = 1.12837917f * a * s;
  return std::copysign(a < 0.25f ? near : far, x);
}

}  // namespace mt::cpu::vm
