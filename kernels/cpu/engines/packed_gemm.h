// Our own single-precision GEMM for constant weights on AVX-512 CPUs: C = clamp(A B + bias), with
// B packed once at planning into panels of 32 columns and an 8x32 micro-kernel that keeps 16
// accumulators in registers (XNNPACK 2022's AVX-512 kernel is 7x16: 7 accumulators, fewer than
// the FMA pipes' latency wants). Measured side by side with xnn_run_operator on ResNet50's 1x1
// shapes at 1 thread (AVX-512 EPYC, best of 30): 193-205 GFLOP/s for XNNPACK, 235-252 for this.
// Used for convolutions with one group (conv.cpp: 1x1 ones as plain GEMMs, others as indirect
// GEMMs over the input pixels) and Winograd's per-point GEMMs (winograd_conv.cpp);
// CPUs without AVX-512F, or MT_CPU_AVX512_GEMM=0, keep XNNPACK.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/engines/epilogue.h"
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Whether the packed GEMM can run here: the CPU has AVX-512F. Plans use it where this holds and
// PlanOptions::packed_gemm permits it.
bool packed_gemm_supported();

// Weights packed for packed_gemm: `panels` holds ceil(n / 32) panels of [k][32] floats (columns
// past n are zero), `bias` ceil(n / 32) * 32 floats (zeros without a bias). Memory owned by the plan.
struct PackedWeights {
  const float* panels = nullptr;
  const float* bias = nullptr;
  size_t k = 0, n = 0;
};

// Bytes of `memory` pack_gemm_weights needs for a k x n matrix (the stored layout cpu_gemm,
// lib/ir/stored_layout.h, has this size).
size_t packed_gemm_bytes(size_t k, size_t n);

// The engine's one packing function (planning, and mt-prepack for the layout cpu_gemm): packs w (n
// rows of k weights, one row per output column, row stride ldw) and bias (n floats or null) into
// `memory` (packed_gemm_bytes(k, n) bytes, 64-byte aligned).
PackedWeights pack_gemm_weights(void* memory, const float* w, size_t ldw, const float* bias, size_t k, size_t n);

// The weights pack_gemm_weights wrote into `memory` (in a plan's memory or a model's memory map, 4-byte
// aligned), without reading them.
PackedWeights packed_gemm_view(const void* memory, size_t k, size_t n);

// w with row i of B (input channel i) multiplied by scale[i], into `memory` (packed_gemm_bytes(w.k,
// w.n) bytes, 64-byte aligned); the bias stays w's. A per-channel gate on A's columns folded into the
// weights, (A diag(scale)) B = A (diag(scale) B): k x n multiplications instead of m x k.
PackedWeights scale_gemm_rows(const PackedWeights& w, const float* scale, void* memory);

// C[m x n] (row stride ldc) = epilogue(A[m x k] (row stride lda) B + bias), split across the
// pool's threads by blocks of 8 rows and panels; the epilogue's residual has C's row stride.
// Requires packed_gemm_supported().
void packed_gemm(const PackedWeights& weights, size_t m, const float* a, size_t lda, float* c, size_t ldc,
                 const Epilogue& epilogue, ThreadPool* pool);
// The same with the output stage a clamp to [low, high] only.
void packed_gemm(const PackedWeights& weights, size_t m, const float* a, size_t lda, float* c, size_t ldc, float low,
                 float high, ThreadPool* pool);

// A convolution over NHWC input as an indirect GEMM: output pixel p's row is the kernel_h x
// kernel_w taps' input pixels (`channels` floats each, or `zeros` in the padding) in tap order, so
// the weights are the OHWI ones packed with k = kernel_h * kernel_w * channels. Groups of 1 only.
struct PackedConvShape {
  size_t n, h, w, channels, out_h, out_w;
  size_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w;
  int64_t pad_top, pad_left;
};

// Output pixel p's receptive field (p counts pixels of all images): its image and the input
// coordinates of its top-left tap (negative in the padding). Shared with int8_vnni.h's convs.
struct ConvWindow {
  size_t n;
  int64_t top, left;
};
ConvWindow window_of(const PackedConvShape& s, size_t p);
inline bool inside(int64_t i, size_t size) { return i >= 0 && i < static_cast<int64_t>(size); }

// Whether packed_conv takes this kernel size and input channel count: at most 64 taps from 16
// channels, else 128 to 512 weights per output channel (gathered into contiguous rows).
bool packed_conv_fits(size_t kernel_h, size_t kernel_w, size_t channels);

// y (NHWC, weights.n channels) = epilogue(conv(x) + bias), the residual NHWC as y. `zeros` holds
// `channels` zeros. A tap that is in the padding for every pixel of a block of rows is skipped (a
// dilated conv's many such taps cost nothing).
void packed_conv(const PackedWeights& weights, const PackedConvShape& shape, const float* x, const float* zeros,
                 float* y, const Epilogue& epilogue, ThreadPool* pool);
// The same with the output stage a clamp to [low, high] only.
void packed_conv(const PackedWeights& weights, const PackedConvShape& shape, const float* x, const float* zeros,
                 float* y, float low, float high, ThreadPool* pool);

}  // namespace mt::cpu
