// IEEE 754 half precision (binary16) conversions, for kernels that read or write float16
// tensors (stored as their 16-bit patterns).
#pragma once

#include <cstdint>

namespace mt::reference {

// Rounds to nearest even; overflow gives infinity, NaN stays NaN.
uint16_t float_to_half(float value);
// Exact.
float half_to_float(uint16_t bits);

}  // namespace mt::reference
