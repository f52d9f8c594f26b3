// Our own float32 depthwise convolution on AVX-512 CPUs (NHWC, 16 channels per vector), 3x3 and
// 5x5, any stride, dilation and padding, with the output stage of epilogue.h (clamp, hardswish or
// silu, residual add) applied in registers. XNNPACK 2022's depthwise kernels run 1.5-3x slower
// than ONNX Runtime's on MobileNet's and EfficientNet's layers on this CPU (they load a pointer per
// tap and output, and keep one sum per output in flight); this one keeps a channel block's weights in
// registers for a whole output row, computes several outputs at once and reads each input tap as
// an FMA's memory operand. Dilated layers (DeepLabV3's) run at the same speed as plain ones.
// CPUs without AVX-512F, or MT_CPU_DEPTHWISE=0, keep XNNPACK's.
#pragma once

#include <cstddef>

#include "kernels/cpu/engines/epilogue.h"
#include "kernels/cpu/engines/packed_gemm.h"  // PackedConvShape
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Whether depthwise_conv can run here: the CPU has AVX-512F.
bool depthwise_supported();

// Whether depthwise_conv takes this kernel and horizontal stride and dilation: 3x3 or 5x5, stride
// 1 or 2, dilation up to 4 (any vertically).
bool depthwise_fits(size_t kernel_h, size_t kernel_w, size_t stride_w, size_t dilation_w);

// Weights packed for depthwise_conv: per block of 16 channels, the kernel's taps in row-major order
// as 16 floats each, then 16 biases (channels past the last are zero). Memory owned by the plan (or,
// stored by mt-prepack, the model's).
struct PackedDepthwise {
  const float* data = nullptr;
  size_t channels = 0, kernel_h = 0, kernel_w = 0;
};

// Bytes pack_depthwise_weights writes for this kernel and channel count.
size_t depthwise_bytes(size_t kernel_h, size_t kernel_w, size_t channels);

// Packs w (channels x kernel_h x kernel_w floats: OIHW with one input channel per group, which is
// also the OHWI order) and bias (channels floats or null) into `memory` (depthwise_bytes, 64-byte
// aligned). A pure function of its inputs: the same bytes on every machine.
PackedDepthwise pack_depthwise_weights(void* memory, const float* w, const float* bias, size_t kernel_h,
                                       size_t kernel_w, size_t channels);

// y (NHWC, shape.n x out_h x out_w x channels) = epilogue(depthwise conv(x) + bias), x NHWC; the
// epilogue's residual, if any, is NHWC as y. Split across the pool by output rows (and channel
// blocks when there are few rows). Requires depthwise_supported() and depthwise_fits().
void depthwise_conv(const PackedDepthwise& weights, const PackedConvShape& shape, const float* x, float* y,
                    const Epilogue& epilogue, ThreadPool* pool);

// Output rows [begin, end) of depthwise_conv (counted over all images), every channel, into y
// (which holds just those rows: row `begin` first), with no residual, on the calling thread
// (depthwise_pointwise.h's share of one thread).
void depthwise_conv_rows(const PackedDepthwise& weights, const PackedConvShape& shape, const float* x, float* y,
                         const Epilogue& epilogue, size_t begin, size_t end);

// The input rows of a depthwise conv held in a ring of `slots` rows (pointwise_depthwise.h): input
// row iy of image n, counted g = n * h + iy, at data + (g % slots) * w * channels. The ring holds
// depthwise_ring_floats(shape, slots) floats: the rows, then room for reads past the last one.
struct DepthwiseRing {
  const float* data = nullptr;
  size_t slots = 0;
};
size_t depthwise_ring_floats(const PackedConvShape& shape, size_t slots);

// Output row `row` (counted over all images) of depthwise_conv into y (which holds just that row),
// with no residual, its input rows read from `ring`, which must hold every row the output row
// reads, on the calling thread.
void depthwise_conv_ring_row(const PackedDepthwise& weights, const PackedConvShape& shape, const DepthwiseRing& ring,
                             float* y, const Epilogue& epilogue, size_t row);

}  // namespace mt::cpu
