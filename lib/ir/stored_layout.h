// How many bytes a constant occupies in the layout its tag names (TensorInfo::layout), so that the
// model reader can check a stored size against the tensor's dtype and shape instead of trusting it.
// Row-major layouts and their permutations (nhwc, ohwi) keep numel x dtype size; the vulkan layouts
// (mt-prepack --backend vulkan, man/mt-format.5) pad channels to blocks of 4 and may store fp16; the
// cpu layouts (mt-prepack --backend cpu) are the packed forms of the cpu engines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lib/core/dtype.h"
#include "lib/ir/shape.h"

namespace mt {

// The vulkan weight layouts, each the exact output of a packer in kernels/vulkan/plan/weight_layout.h for
// one group (group 1 for conv; depthwise is group == channels).
enum class VulkanLayout {
  conv2d,            // conv2d W[M, C, kH, kW]: per 4 outputs, per 4 inputs, per tap, a 4x4 block
  conv_transpose2d,  // conv_transpose2d W[C, M, kH, kW]: the same blocks from the transposed order
  depthwise,         // depthwise conv2d W[C, 1, kH, kW]: per 4 channels, per tap, a vec4
  linear,            // linear W[N, K]: per 4 outputs, per k, a vec4
  channels,          // a bias [M]: vec4 per 4 channels
  // int8 weights (int8 tensors, 1 byte per weight; per-channel scales stay in the tensor's quant):
  conv2d_int8,     // conv2d W[M, C, kH, kW]: per 4 outputs, per 4 inputs, per tap, 4 words of 4 inputs
  depthwise_int8,  // depthwise conv2d W[C, 1, kH, kW]: per 4 channels, per tap, one word of 4
  linear_int8,     // linear W[N, K]: per 4 outputs, per 4 k, 4 words of 4 k
};

struct VulkanStorage {
  VulkanLayout layout;
  bool fp16 = false;  // IEEE half floats instead of float32 (the tensor's dtype stays float32)
};

// True for the int8 layouts, which keep their bytes in every precision (no ".f16" form).
bool is_int8_layout(VulkanLayout layout);

// The tag of a vulkan layout: "vk_conv2d", ..., "vk_conv2d_i8", with ".f16" appended for fp16 storage.
std::string vulkan_layout_tag(VulkanStorage storage);
// The vulkan layout a tag names, nullopt for any other tag (empty, nhwc, ohwi, unknown).
std::optional<VulkanStorage> parse_vulkan_layout(std::string_view tag);

// The cpu backend's packed weight layouts: each holds exactly the bytes one engine's packing function
// writes for the node that reads the weights (kernels/cpu/README.md, "Packed weights"), so that a plan
// reads them in place. Panels are 32 output columns wide, padded with zeros.
enum class CpuLayout {
  gemm,                // float32 conv2d W[M, C, kH, kW] (group 1) or linear W[N, K]: engines/packed_gemm.h,
                       // ceil(M/32) panels of [C kH kW][32] floats, then the bias, ceil(M/32) x 32 floats
  winograd4,           // float32 conv2d W[M, C, 3, 3]: U = G g G^T of F(4x4, 3x3), 36 points x [M][C]
  winograd2,           // the same for F(2x2, 3x3): 16 points x [M][C]
  winograd4_gemm,      // 36 points x a gemm block of the C x M matrix U (no bias: zeros)
  winograd2_gemm,      // 16 points x the same
  vnni_gemm,           // int8 conv2d W[M, C, kH, kW] (group 1) or linear W[N, K]: engines/int8_vnni.h's GEMM,
                       // kH kW taps of C channels rounded up to 4, panels of [k/4][32][4] bytes, then
                       // ceil(M/32) x 32 int32 folded biases and float32 multipliers
  vnni_gemm_gathered,  // the same with one tap of kH kW C channels (convs under 16 channels)
  vnni_depthwise,      // int8 depthwise conv2d W[C, 1, k, k]: per 16 channels, per kernel row, pairs of
                       // taps as int16, then ceil(C/16) x 16 int32 folded biases and float32 multipliers
  depthwise,           // float32 depthwise conv2d W[C, 1, kH, kW]: engines/depthwise_conv.h, per 16
                       // channels the kH kW taps as 16 floats each, then 16 biases
  stem,                // float32 conv2d W[M, C, kH, kW] of 1 to 4 input channels: engines/stem_conv.h, per
                       // tap of OHWI's kH kW C order ceil(M/16) x 16 floats, then the bias as many
};

// The tag of a cpu layout ("cpu_gemm", ...), and the cpu layout a tag names (nullopt for any other).
std::string_view cpu_layout_tag(CpuLayout layout);
std::optional<CpuLayout> parse_cpu_layout(std::string_view tag);

// Bytes a constant of `dtype` and `shape` stored in `layout` occupies. Throws Error(invalid_input)
// when a vulkan or cpu layout does not fit the tensor (the wrong dtype: float32, or int8 for the
// int8 layouts; the wrong rank, a depthwise weight with more than one input channel per group or a
// non-square kernel, a Winograd weight that is not 3x3) or the size would not fit 64 bits.
uint64_t stored_byte_size(DType dtype, const Shape& shape, std::string_view layout);

}  // namespace mt
