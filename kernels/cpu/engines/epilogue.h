// What a float32 conv engine does to each output value after its sums (the output stage), so that
// the nodes after a conv that only transform its output elementwise run inside it instead of
// reading and writing the whole tensor again (kernels/cpu/ops/conv_fusion.h decides which):
//
//   y = clamp(sum + bias, low, high)      the conv's own fused clamp (relu, relu6)
//   y = activation(y)                     a following hardswish or silu node
//   y = clamp(y + residual, r_low, r_high)  a following add of a tensor of the output's shape
//                                         (a residual connection), with that add's fused clamp
//
// Used by packed_gemm.h and depthwise_conv.h; the vector code is epilogue_avx512.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace mt::cpu {

enum class Activation : uint8_t { none, hardswish, silu };

struct Epilogue {
  float low = -std::numeric_limits<float>::infinity();
  float high = std::numeric_limits<float>::infinity();
  Activation activation = Activation::none;
  // Added after the activation when not null: the same layout and row stride as the output.
  const float* residual = nullptr;
  float residual_low = -std::numeric_limits<float>::infinity();
  float residual_high = std::numeric_limits<float>::infinity();
};

}  // namespace mt::cpu
