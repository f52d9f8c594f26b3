// IEEE 754 half precision (binary16) conversions, for code that reads or writes float16 tensors
// (stored as their 16-bit patterns): the reference kernels, the cpu cast kernel, the vulkan weight
// layouts and the importer's constants. Inline because the cpu cast kernel converts in a loop.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace mt {

// Exact.
inline float half_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf or NaN
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Subnormal half: mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign != 0 ? -magnitude : magnitude;
}

// Rounds to nearest even; overflow gives infinity, NaN stays NaN (quiet).
inline uint16_t float_to_half(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);   // NaN
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: infinity
  if (magnitude < 0x38800000u) {
    // Subnormal half (or zero): scale so that the half's units land in the integer part (exact:
    // a power of two), and let nearbyint round to nearest even.
    const float scaled = std::bit_cast<float>(magnitude) * 16777216.0f;  // 2^24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  // Normal half: rebias the exponent and round the 13 dropped mantissa bits to nearest even. A
  // carry out of the mantissa correctly bumps the exponent.
  const uint32_t rebased = magnitude - (112u << 23);
  const uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return static_cast<uint16_t>(sign | (rounded >> 13));
}

}  // namespace mt
