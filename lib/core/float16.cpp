#include "kernels/reference/float16.h"

#include <bit>

namespace mt::reference {

uint16_t float_to_half(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) return sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u);  // inf or NaN (quiet)
  // Unbiased exponent; half normals cover [-14, 15].
  const int e = static_cast<int>(exponent) - 127;
  if (e > 15) return sign | 0x7c00u;
  if (e >= -14) {
    // Normal half: keep 10 mantissa bits, round the 13 dropped bits to nearest even. A carry
    // out of the mantissa correctly bumps the exponent (up to infinity).
    uint32_t half = (static_cast<uint32_t>(e + 15) << 10) | (mantissa >> 13);
    const uint32_t dropped = mantissa & 0x1fffu;
    if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  if (e < -25) return sign;  // below half the smallest subnormal: rounds to zero
  // Subnormal half h * 2^-24. With the implicit one made explicit the float is M * 2^(e-23),
  // so h = M >> -(e+1), rounded to nearest even.
  mantissa |= 0x800000u;
  const int shift = -e - 1;
  const uint32_t half = mantissa >> shift;
  const uint32_t dropped = mantissa & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  uint32_t rounded = half;
  if (dropped > halfway || (dropped == halfway && (half & 1u))) ++rounded;
  return static_cast<uint16_t>(sign | rounded);
}

float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal half: normalise into a float.
  int e = -14;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  mantissa &= 0x3ffu;
  return std::bit_cast<float>(sign | (static_cast<uint32_t>(e + 127) << 23) | (mantissa << 13));
}

}  // namespace mt::reference
