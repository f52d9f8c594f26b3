// Our own int8 kernels for AVX512-VNNI CPUs: a u8 x s8 GEMM on `vpdpbusd` (1x1 convs and linear as
// plain GEMMs, other one-group convs as indirect GEMMs over NHWC pixels) and 3x3 / 5x5 depthwise
// convs on `vpdpwssd`, with requantization, bias and clamp fused into the output and weights packed
// once at planning; and 256-entry byte tables on VBMI's vpermi2b. CPUs without VNNI (and ARM), or MT_CPU_INT8_VNNI=0, keep XNNPACK's qc8 operators.
//
// Arithmetic (the reference int8 kernels', lib/ops/int8_arithmetic.h): acc = bias[c] + sum of
// w * (x - x_zero) in exact int32, y = clamp(float(acc) * multiplier[c], lo - y_zero, hi - y_zero)
// rounded half to even, plus y_zero. The GEMM reads x as unsigned bytes x + 128 (flipped by each
// broadcast, or by int8_flip in one pass per layer: Int8GemmInput): sum w * (x - x_zero) =
// sum w * (x + 128) - (128 + x_zero) * sum w, so the packed bias is bias - (128 + x_zero) * sum w,
// computed at planning. Padding reads a pixel of x_zero values (flipped as the input is).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/parallel.h"  // PixelRangeTail
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::cpu {

// Whether these kernels can run here: the CPU has AVX512-VNNI, -BW, -VL and -VBMI. Plans use them
// where this holds and PlanOptions::int8_vnni permits it.
bool int8_vnni_supported();

// What every output channel shares: the output zero point and the clamp in int8 values.
struct Int8Output {
  int32_t zero_point = 0;
  int32_t low = -128, high = 127;
};

// GEMM weights packed for int8_gemm / int8_conv: k = taps * round_up(channels, 4) bytes per
// output column (each tap's channels zero-padded to a multiple of 4), in ceil(n / 32) panels of
// [k / 4][32][4] bytes; bias (folded as above) and multipliers padded to the panels. Plan memory.
struct PackedInt8Gemm {
  const int8_t* panels = nullptr;
  const int32_t* bias = nullptr;
  const float* multipliers = nullptr;
  size_t taps = 1, k = 0, n = 0;
  Int8Output out;
};

// An int8 add fused into the GEMM's output (the cpu planner's fusion of add(conv(x), r), or
// add(r, conv(x)), on this path): the GEMM's int8 result c (its own clamp and zero point) is not
// stored but added to r as the reference int8 add does it, in the same float32 operations:
// y = clamp(c_multiplier (c - c_zero) + r_multiplier (r - r_zero)) rounded half to even, plus the
// add's zero point. Exact: c - c_zero is the rounded value before the zero point is added.
struct Int8ResidualAdd {
  float c_multiplier = 1, r_multiplier = 1;  // c_scale / y_scale, r_scale / y_scale
  int32_t r_zero = 0;
  Int8Output out;  // the add's output zero point and fused clamp
};

// The residual operand of a fused add: `add` applied with r laid out as C (same row stride).
struct Int8Residual {
  const Int8ResidualAdd* add = nullptr;  // null: no fused add
  const int8_t* r = nullptr;
};

// Bytes of memory pack_int8_gemm needs.
size_t int8_gemm_bytes(size_t taps, size_t channels, size_t n);

// The GEMM's one packing function (planning, and mt-prepack for the layouts cpu_vnni_gemm and
// cpu_vnni_gemm_gathered): packs w (n rows of taps * channels int8 weights, tap-major as OHWI), bias
// (n int32 or null) and the per-column multipliers x_scale * w_scale / y_scale into `memory`
// (int8_gemm_bytes, 64-byte aligned) for input zero point x_zero.
PackedInt8Gemm pack_int8_gemm(void* memory, const int8_t* w, const int32_t* bias, const float* multipliers,
                              size_t taps, size_t channels, size_t n, int32_t x_zero, Int8Output out);

// The weights pack_int8_gemm wrote into `memory` (a plan's memory or a model's memory map, 4-byte
// aligned), without reading them.
PackedInt8Gemm int8_gemm_view(const void* memory, size_t taps, size_t channels, size_t n, Int8Output out);

// u[i] = x[i] + 128 as unsigned bytes (x XOR 0x80): the input the GEMM reads. Any CPU.
void int8_flip(const int8_t* x, uint8_t* u, size_t n, ThreadPool* pool);

// The GEMMs' input A (or a conv's x): the int8 values, flipped to unsigned by the micro-kernel as
// it broadcasts them (one vpxord per two vpdpbusd), or bytes flipped beforehand by int8_flip.
struct Int8GemmInput {
  const void* data = nullptr;
  bool flipped = false;  // true: data holds x + 128 (int8_flip); false: x itself
};

// Whether the GEMMs should read flipped input (int8_flip once per layer) on this CPU: not on AMD,
// whose Zen 5 runs the vpxord beside two vpdpbusd per cycle (measured: 2.00 vpdpbusd per cycle
// with or without it), so flipping in the kernel saves a pass over each input and a wake of the
// pool; on Intel's Sapphire Rapids the vpxord competes with vpdpbusd for its ports (ResNet18's 3x3
// convs 490 -> 400 GOPS), so a separate pass is cheaper there.
bool int8_flip_per_layer();

// C[m x n] (row stride ldc) = requantize(A[m x channels] (row stride lda) B + bias), split across
// the pool's threads. A's rows are read in 4-byte steps up to round_up(channels, 4): up to 3 bytes
// past the last row (memory XNNPACK may over-read). Requires int8_vnni_enabled(), taps == 1. With
// residual.add, C = that add of the GEMM's result and residual.r.
void int8_gemm(const PackedInt8Gemm& weights, size_t m, Int8GemmInput a, size_t lda, int8_t* c, size_t ldc,
               ThreadPool* pool, Int8Residual residual = {});

// Whether int8_conv takes a kernel of this size (at most 64 taps).
bool int8_conv_fits(size_t kernel_h, size_t kernel_w);

// Whether a conv with this kernel and input channel count runs gathered: under 16 channels the
// micro-kernel would reload its row pointers every step or so, so each block of 8 output pixels
// copies its taps into contiguous rows (an im2col of 8 rows, in cache), and the weights are packed
// with taps = 1 and channels = kernel_h * kernel_w * channels.
bool int8_conv_gathers(size_t kernel_h, size_t kernel_w, size_t channels);

// y (NHWC, weights.n channels) = requantize(conv(x) + bias) as an indirect GEMM over x's pixels
// (one group), gathered when weights.taps is 1 for a larger kernel (int8_conv_gathers). `padding`
// holds round_up(channels, 4) bytes of the input zero point, flipped as x is. With residual.add,
// y = that add of the conv and residual.r (NHWC, as y).
void int8_conv(const PackedInt8Gemm& weights, const PackedConvShape& shape, Int8GemmInput x, const void* padding,
               int8_t* y, ThreadPool* pool, Int8Residual residual = {});

// Depthwise weights (one input channel per group, multiplier 1), 3x3 or 5x5: per block of 16
// channels and kernel row, the row's taps in pairs as int16 (w[kx][c], w[kx + 1][c]), an odd last
// tap paired with 0; bias folded as bias - x_zero * sum w.
struct PackedInt8Depthwise {
  const int16_t* weights = nullptr;
  const int32_t* bias = nullptr;
  const float* multipliers = nullptr;
  size_t channels = 0, kernel = 0;  // kernel: 3 or 5
  Int8Output out;
};

size_t int8_depthwise_bytes(size_t kernel, size_t channels);

// The depthwise kernels' one packing function (planning, and mt-prepack for the layout
// cpu_vnni_depthwise): packs w (channels x kernel x kernel int8, OIHW with one input channel) into
// `memory` (int8_depthwise_bytes, 64-byte aligned).
PackedInt8Depthwise pack_int8_depthwise(void* memory, const int8_t* w, const int32_t* bias, const float* multipliers,
                                        size_t kernel, size_t channels, int32_t x_zero, Int8Output out);

// The weights pack_int8_depthwise wrote into `memory`, without reading them.
PackedInt8Depthwise int8_depthwise_view(const void* memory, size_t kernel, size_t channels, Int8Output out);

// What the planner fused into a depthwise conv besides its weights (int8_depthwise,
// int8_depthwise_pointwise). Each optional.
struct Int8DepthwiseFusion {
  // An expanding 1x1 conv (taps 1) whose output only this conv reads (through input_lookup, if
  // set), left to it by the conv's planner where int8_depthwise_expand_pays: x holds the expanding
  // conv's input, `expand_channels` bytes per pixel, and each input row the conv widens is first
  // computed by int8_gemm into a line of the thread's scratch, then looked up, then widened. The
  // expanded tensor is never stored, and the two convs take one parallel region; the rows at a
  // boundary between two threads' rows are computed by both. Splits by rows only.
  PackedInt8Gemm expand;  // panels null: none
  size_t expand_channels = 0;
  // An int8 activation (a 256-entry table) whose only reader is this conv, left to it by the
  // activation's planner: x holds the activation's input, and each input row the conv widens is
  // first looked up (table[x + 128]), into a line of the thread's scratch while it is in cache.
  // The activation then costs no pass over memory and no parallel region (MobileNetV3's hardswish
  // and EfficientNet's SiLU after each expanding 1x1 conv). Padding is not looked up: it holds the
  // conv's own input zero point.
  const int8_t* input_lookup = nullptr;
  // The conv's own fused activation: each output y becomes lookup[y + 128], applied to each
  // output row (or to the part's channels of it) once it is complete.
  const int8_t* lookup = nullptr;
};

// Scratch bytes int8_depthwise needs to run on up to `threads` threads with `fusion` (widened input
// rows, and with an input lookup or an expanding conv one input row).
size_t int8_depthwise_scratch_bytes(const PackedConvShape& shape, size_t threads,
                                    const Int8DepthwiseFusion& fusion = {});

// Whether an expanding conv pays inside a depthwise conv of this shape on `threads` threads: an
// expanded tensor of 128 KiB or more, dilation 1, and at most an eighth more rows of the expanding
// conv computed at the boundaries between threads.
bool int8_depthwise_expand_pays(const PackedConvShape& shape, size_t threads);

// y (NHWC) = requantize(depthwise conv(x) + bias); `padding` holds `channels` bytes of the input
// zero point; `scratch`: int8_depthwise_scratch_bytes(shape, threads, fusion), 64-byte aligned. Any stride, dilation and padding; split across up to `threads` of the pool's
// threads by channel blocks of 16 or by output rows, whichever shares the work more evenly (rows on
// a tie).
//
// With `sums` ([batch][threads][channels] int32), each thread also adds up the outputs it computes
// per image and channel, once their rows are complete and in its cache, into its own row of sums
// (every row written, zero where a thread computed nothing): a global average pool that reads y
// (a squeeze-excitation's) then only adds the rows and requantizes (int8_global_avg_pool_of_sums),
// without another parallel region or a pass over y.
void int8_depthwise(const PackedInt8Depthwise& weights, const PackedConvShape& shape, const int8_t* x,
                    const int8_t* padding, int8_t* y, void* scratch, size_t threads, ThreadPool* pool,
                    const Int8DepthwiseFusion& fusion = {}, int32_t* sums = nullptr);

// A depthwise conv (with its fused activations, or none) and the pointwise conv (1x1, stride 1,
// one group) that alone reads its output, as one parallel region: each thread takes an even share
// of the output pixels (engines/pixel_shares.h), computes the depthwise rows that hold them into its
// own scratch, then the pointwise conv of its pixels while they are in its cache, then `tail` on
// them (ShuffleNet's channel shuffle of the pointwise conv's output). Against separate steps this
// saves a wake of the pool and the read of rows another core wrote per step (ShuffleNetV2 int8's
// 28x28 units: 2 threads took the depthwise conv alone 9.0 -> 6.7 us inside the network, 8.6 -> 4.8
// us on its own). The GEMM reads the depthwise output unflipped (int8_flip_per_layer is not
// consulted: a flip pass would be the step saved). Results equal those of int8_depthwise, then
// int8_gemm.
struct Int8DepthwisePointwise {
  PackedInt8Depthwise depthwise;
  Int8DepthwiseFusion fusion;  // the depthwise conv's
  PackedInt8Gemm pointwise;    // taps 1, k = round_up(depthwise channels, 4)
};

// Scratch bytes int8_depthwise_pointwise needs on up to `threads` threads (64-byte aligned).
size_t int8_depthwise_pointwise_scratch_bytes(const PackedConvShape& depthwise, size_t threads,
                                              const Int8DepthwiseFusion& fusion = {});

// With residual.add, y is that add of the pointwise conv's result and residual.r.
void int8_depthwise_pointwise(const Int8DepthwisePointwise& fused, const PackedConvShape& depthwise, const int8_t* x,
                              const int8_t* padding, void* scratch, size_t threads, int8_t* y, Int8Residual residual,
                              const PixelRangeTail& tail, ThreadPool* pool);

// y = requantize((a - a_zero) (b - b_zero), multiplier) (the reference int8 mul: the product is
// exact in int32, and in float32) over `outer` x `repeat` rows of `inner` values: a and y hold
// every row, b one row per outer index, read by each of its `repeat` rows (repeat 1: elementwise;
// a squeeze-excitation scale [n, 1, 1, C] in NHWC: repeat H * W, inner C). Split across the pool's
// threads by rows (int8_binary_vnni.cpp).
struct Int8MulParams {
  int32_t a_zero = 0, b_zero = 0;
  float multiplier = 1;  // a_scale * b_scale / y_scale
  Int8Output out;
};
void int8_mul(const int8_t* a, const int8_t* b, int8_t* y, size_t outer, size_t repeat, size_t inner,
              const Int8MulParams& params, ThreadPool* pool);

// y[n][c] = requantize(sum over the `pixels` of x[n][p][c] - x_zero, multiplier) (the reference
// int8 global average pool; multiplier x_scale / (pixels * y_scale) formed as it forms it), NHWC x,
// on up to `threads` of the pool's threads, with int8_global_avg_pool_scratch_bytes of scratch
// for their partial sums (int8_pool_vnni.cpp).
size_t int8_global_avg_pool_scratch_bytes(size_t batch, size_t channels, size_t threads);
void int8_global_avg_pool(const int8_t* x, int8_t* y, size_t batch, size_t pixels, size_t channels, int32_t x_zero,
                          float multiplier, Int8Output out, void* scratch, size_t threads, ThreadPool* pool);
// The same pool from sums of x already formed: `slots` rows per image of `channels` int32 partial
// sums of x ([batch][slots][channels], read only), as int8_depthwise leaves them. On the calling
// thread: a few hundred additions.
void int8_global_avg_pool_of_sums(const int32_t* sums, size_t slots, int8_t* y, size_t batch, size_t pixels,
                                  size_t channels, int32_t x_zero, float multiplier, Int8Output out);
// sums[c] += x[p * stride + c] over `pixels` pixels, for c < count.
void int8_add_pixel_sums(const int8_t* x, size_t pixels, size_t stride, size_t count, int32_t* sums);

// dst[i] = table[src[i] + 128] for n bytes (int8 hardswish and hardsigmoid), 64 at a time
// (int8_lookup_vbmi.cpp). Requires int8_vnni_enabled().
void int8_lookup(const int8_t* table, const int8_t* src, int8_t* dst, size_t n);
// The same on `rows` runs of n bytes, `stride` bytes apart in src and in dst (a block of a conv's
// output, in place; a thread's channels of a row of pixels). Requires int8_vnni_enabled().
void int8_lookup_rows(const int8_t* table, const int8_t* src, int8_t* dst, size_t rows, size_t stride, size_t n);

}  // namespace mt::cpu
