// How many bytes a constant occupies in the layout its tag names (TensorInfo::layout), so that the
// model reader can check a stored size against the tensor's dtype and shape instead of trusting it.
// Row-major layouts and their permutations (nhwc, ohwi) keep numel x dtype size; the vulkan layouts
// (mt-prepack --backend vulkan, man/mt-format.5) pad channels to blocks of 4 and may store fp16.
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

// Bytes a constant of `dtype` and `shape` stored in `layout` occupies. Throws Error(invalid_input)
// when a vulkan layout does not fit the tensor (dtype other than float32, or int8 for the int8
// layouts, wrong rank, a depthwise
// weight with more than one input channel per group) or the size would not fit 64 bits.
uint64_t stored_byte_size(DType dtype, const Shape& shape, std::string_view layout);

}  // namespace mt
