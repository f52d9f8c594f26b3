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
};

struct VulkanStorage {
  VulkanLayout layout;
  bool fp16 = false;  // IEEE half floats instead of float32 (the tensor's dtype stays float32)
};

// The tag of a vulkan layout: "vk_conv2d", ..., with ".f16" appended for fp16 storage.
std::string vulkan_layout_tag(VulkanStorage storage);
// The vulkan layout a tag names, nullopt for any other tag (empty, nhwc, ohwi, unknown).
std::optional<VulkanStorage> parse_vulkan_layout(std::string_view tag);

// Bytes a constant of `dtype` and `shape` stored in `layout` occupies. Throws Error(invalid_input)
// when a vulkan layout does not fit the tensor (dtype other than float32, wrong rank, a depthwise
// weight with more than one input channel per group) or the size would not fit 64 bits.
uint64_t stored_byte_size(DType dtype, const Shape& shape, std::string_view layout);

}  // namespace mt
