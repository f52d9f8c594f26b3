// How many output channels one XNNPACK GEMM-based operator (convolution, fully connected) should
// own. XNNPACK's GEMMs sweep every output channel for each block of a few rows (output pixels),
// so weights larger than the L2 cache stream from memory once per row block. Splitting the output
// channels into operators of at most kSliceBytes of weights keeps each slice in L2 while it meets
// every row block; the operators write their channels into the shared output (channel stride).
//
// Measured at 1 thread (AVX-512 EPYC, mt-bench medians): ResNet50 42.1 -> 39.4-40.1 ms, its
// layer4 convs 1.15-1.17x faster; 128, 256 and 512 KB perform alike, 64 KB is slower.
#pragma once

#include <algorithm>
#include <cstddef>

namespace mt::cpu {

inline constexpr size_t kSliceBytes = size_t{256} << 10;

// Output channels per operator for `out_channels` channels of `weights_per_channel` floats each,
// applied to `rows` rows: all of them when the weights fit or there is a single row block.
inline size_t output_slice(size_t out_channels, size_t weights_per_channel, size_t rows) {
  constexpr size_t kRowBlock = 7;  // rows of XNNPACK's largest f32 GEMM micro-kernels
  const size_t bytes_per_channel = weights_per_channel * sizeof(float);
  if (rows <= kRowBlock || out_channels * bytes_per_channel <= kSliceBytes) return out_channels;
  const size_t slice = kSliceBytes / bytes_per_channel / 16 * 16;  // whole 16-channel panels
  return std::max<size_t>(slice, 16);
}

}  // namespace mt::cpu
