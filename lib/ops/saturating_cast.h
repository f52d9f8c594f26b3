// Float to integer conversion with defined results everywhere, shared by the reference and cpu
// kernels so that they agree (cast, and clamp's integer bounds): truncated toward zero, saturated
// to the integer's range, NaN to 0, where C++ and ONNX leave the result undefined.
#pragma once

#include <cmath>
#include <limits>

namespace mt {

template <typename T>
T saturating_cast(double value) {
  if (std::isnan(value)) return 0;
  const double truncated = std::trunc(value);
  if (truncated <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (truncated >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(truncated);
}

}  // namespace mt
