// Winograd F(4x4, 3x3) convolution for 3x3, stride 1, dilation 1, group 1 conv2d with constant
// weights: 4x fewer multiplies than the direct XNNPACK path, for 4x the packed weights.
#pragma once

#include <cstddef>

#include "kernels/cpu/plan_builder.h"

namespace mt::cpu {

// The shape facts the choice depends on (output height and width, channels in and out).
struct WinogradShape {
  size_t out_h, out_w, in_channels, out_channels;
};

// MT_CPU_WINOGRAD: unset or "1" true, "0" false, anything else Error(usage). Read once per plan.
bool winograd_enabled();

// Whether Winograd beats the direct path for a conv of this shape (measured crossover, see
// winograd_conv.cpp).
bool winograd_pays(const WinogradShape& shape);

// Whether `node` is a conv2d Winograd can run: 3x3, stride 1, dilation 1, group 1, constant weights.
bool winograd_applies(const NodeContext& context);

void plan_conv2d_winograd(NodeContext& context);

}  // namespace mt::cpu
