// The output stage of kernels/cpu/engines/epilogue.h in double precision, as the engines' tests
// check it: clamp, the activation, then the residual and its clamp.
#pragma once

#include <algorithm>
#include <cmath>

#include "kernels/cpu/engines/epilogue.h"

namespace mt::test {

// The value an engine should store for `sum` (bias included) and the residual value `r` (read only
// when the epilogue has a residual).
inline double reference_epilogue(double sum, const cpu::Epilogue& e, double r) {
  double v = std::min<double>(std::max<double>(sum, e.low), e.high);
  if (e.activation == cpu::Activation::hardswish) v = v * std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0;
  if (e.activation == cpu::Activation::silu) v = v / (1.0 + std::exp(-v));
  if (e.residual != nullptr) v = std::min<double>(std::max<double>(v + r, e.residual_low), e.residual_high);
  return v;
}

// An engine's output `got` against reference_epilogue, for a sum whose |terms| (bias included) add up
// to `magnitude`. Tolerance: 1e-5 of the magnitude (fp32 accumulation), plus 2e-6 of the value
// (silu's exp) and 1e-6 of the residual value when there is one.
struct EpilogueCheck {
  double want;
  bool ok;
};
inline EpilogueCheck check_epilogue_output(float got, double sum, double magnitude, const cpu::Epilogue& e, double r) {
  const double want = reference_epilogue(sum, e, r);
  const double allowed =
      1e-5 * (magnitude + 1) + 2e-6 * std::fabs(want) + (e.residual != nullptr ? 1e-6 * std::fabs(r) : 0);
  return {want, std::fabs(got - want) <= allowed};
}

}  // namespace mt::test
