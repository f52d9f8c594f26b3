// Constants in the layouts the Vulkan shaders read, in fp32 or fp16: plain functions of the graph's
// row-major data with no device involved, so that planning uploads their result as is and
// mt-prepack --backend vulkan stores the same bytes in a model (prepack.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lib/ir/shape.h"

namespace mt::vulkan {

// fp32 values as stored on the device: 4-byte floats, or IEEE half floats (round to nearest even).
std::vector<std::byte> encode_floats(const std::vector<float>& values, bool fp16);

// A tensor in the packed layout activations use (packed_layout.h), padding lanes zero.
std::vector<float> pack_tensor(const float* data, const Shape& shape);

// One vec4 per block of 4 channels (bias, batch-norm scale and shift), padding lanes zero.
std::vector<float> pack_channels(const float* values, int64_t channels);

// Weights of conv2d (W[M, C/group, kH, kW]) or conv_transpose2d (W[C, M/group, kH, kW]) for
// shaders/conv2d.comp, pointwise.comp and conv_transpose2d.comp. For each block of 4 output
// channels `ob`, only the input-channel blocks its groups read are stored: ranges[3 ob .. 3 ob + 2]
// = {first 4x4 matrix of the block's weights, first input block, end input block}, and for each input
// block ib in that range and each tap (ky, kx), 4 vec4: row l holds the weights from input channel
// 4 ib + l to the 4 output channels (zero outside the group and past the ends).
struct ConvWeights {
  std::vector<float> weights;
  std::vector<int32_t> ranges;
};
// The `ranges` of pack_conv_weights alone, for weights stored packed already (mt-prepack).
std::vector<int32_t> conv_weight_ranges(int64_t out_channels, int64_t in_channels, int64_t group, int64_t taps);
ConvWeights pack_conv_weights(const float* w, int64_t out_channels, int64_t in_channels, int64_t group, int64_t kh,
                              int64_t kw, bool transposed);

// Winograd F(2x2, 3x3) weights for shaders/winograd_gemm.comp from row-major W[M, C, 3, 3] (group 1):
// for each of the 16 positions of U = G g G^T, output block and input block, 4 vec4: row l holds
// the weights from input channel 4 ib + l to the block's 4 output channels (zero past the ends).
std::vector<float> pack_winograd_weights(const float* w, int64_t out_channels, int64_t in_channels);
// The row-major W[M, C, kH, kW] of group-1 conv2d weights packed by pack_conv_weights (for a
// prepacked model whose conv the planner runs another way).
std::vector<float> unpack_conv_weights(const float* packed, int64_t out_channels, int64_t in_channels, int64_t kh,
                                       int64_t kw);

// Depthwise conv2d weights (group == C == M, W[C, 1, kH, kW]) for shaders/depthwise.comp: per
// channel block, per tap, one vec4.
std::vector<float> pack_depthwise_weights(const float* w, int64_t channels, int64_t kh, int64_t kw);

// linear weights W[N, K] for shaders/linear.comp: per block of 4 outputs, per k, one vec4.
std::vector<float> pack_linear_weights(const float* w, int64_t n, int64_t k);

// int8 weights (lib/ir/stored_layout.h, the *_int8 layouts): the bytes the int8 shaders read as
// 32-bit words of 4 signed bytes, word o of a 4x4 block holding the weights from 4 input channels
// (or 4 k) to output channel o, so that one word meets one texel of the input in a 4-element dot
// product. Zero outside the group and past the ends.
// conv2d (W[M, C/group, kH, kW]): for each output block, each input block in its `ranges` (as
// pack_conv_weights) and each tap, 16 bytes: byte 4 o + l = W[4 ob + o][4 ib + l][tap].
struct ConvWeightsInt8 {
  std::vector<int8_t> weights;
  std::vector<int32_t> ranges;
};
ConvWeightsInt8 pack_conv_weights_int8(const int8_t* w, int64_t out_channels, int64_t in_channels, int64_t group,
                                       int64_t kh, int64_t kw);
// depthwise conv2d (W[C, 1, kH, kW]): for each channel block and tap, 4 bytes (one per channel).
std::vector<int8_t> pack_depthwise_weights_int8(const int8_t* w, int64_t channels, int64_t kh, int64_t kw);
// linear (W[N, K]): for each output block and each block of 4 k, 16 bytes: byte 4 o + l = W[4 nb + o][4 kb + l].
std::vector<int8_t> pack_linear_weights_int8(const int8_t* w, int64_t n, int64_t k);
// The sum of each output channel's weights in packed conv2d or linear int8 weights, whose output
// block ob starts at byte 16 * first[ob] (first[ob + 1] for the next; the last runs to the end).
std::vector<int32_t> packed_int8_weight_sums(const std::vector<int8_t>& packed, const std::vector<int64_t>& first,
                                             int64_t out_channels);

}  // namespace mt::vulkan
