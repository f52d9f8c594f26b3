// Our own float32 convolution for layers with few input channels (a network's stem: 3 channels of
// an image in, 32 to 64 out) on AVX-512 CPUs. The input is read in whatever layout it has (the
// caller's NCHW image needs no reordering step), the output is NHWC with 16 output channels per
// vector: each tap of each output pixel is one broadcast of an input value into FMAs with the tap's
// weight vectors, 6 to 14 pixels at a time, and the output stage of epilogue.h is applied in
// registers. XNNPACK 2022 runs such layers with 64 outputs 1.45x slower (32: 1.4x), after a layout
// change and an indirection buffer filled at planning; our packed GEMM's gathered rows pay an im2col
// copy. CPUs without AVX-512F, or MT_CPU_STEM_CONV=0, keep the other paths.
#pragma once

#include <cstddef>

#include "kernels/cpu/engines/epilogue.h"
#include "kernels/cpu/engines/packed_gemm.h"  // PackedConvShape
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Whether stem_conv can run here: the CPU has AVX-512F.
bool stem_conv_supported();

// Whether stem_conv takes a one-group conv of these channels and kernel: 1 to 4 input channels, 32
// to 64 output channels (fewer: XNNPACK's, stem_conv.cpp) and a kernel up to 7x7.
bool stem_conv_fits(size_t in_channels, size_t out_channels, size_t kernel_h, size_t kernel_w);

// Weights packed for stem_conv: per tap (kernel row, kernel column, input channel: OHWI's order)
// the output channels as ceil(out_channels / 16) vectors of 16 floats, then the bias as as many
// (channels past the last are zero).
struct PackedStem {
  const float* data = nullptr;
  size_t in_channels = 0, out_channels = 0, kernel_h = 0, kernel_w = 0;
};

// Bytes pack_stem_weights writes.
size_t stem_bytes(size_t in_channels, size_t out_channels, size_t kernel_h, size_t kernel_w);

// Packs OHWI weights (out_channels x kernel_h x kernel_w x in_channels) and bias (out_channels
// floats or null) into `memory` (stem_bytes, 64-byte aligned). A pure function of its inputs.
PackedStem pack_stem_weights(void* memory, const float* ohwi, const float* bias, size_t in_channels,
                             size_t out_channels, size_t kernel_h, size_t kernel_w);

// Where input element (n, c, y, x) is: x_data + n * image + c * channel + y * row + x * column (in
// floats), for any order of the input's dimensions.
struct StemStrides {
  size_t image, channel, row, column;
};

// y (NHWC, shape.n x out_h x out_w x out_channels) = epilogue(conv(x) + bias); the epilogue's
// residual, if any, is NHWC as y. Split across the pool by output rows. Requires
// stem_conv_supported(), 1 to 4 input channels, 17 to 64 output ones and a kernel up to 7x7.
void stem_conv(const PackedStem& weights, const PackedConvShape& shape, const float* x, const StemStrides& strides,
               float* y, const Epilogue& epilogue, ThreadPool* pool);

}  // namespace mt::cpu
