#include "lib/ir/stored_layout.h"

#include <array>

#include "lib/core/error.h"

namespace mt {
namespace {

constexpr std::string_view kFp16Suffix = ".f16";

struct LayoutName {
  VulkanLayout layout;
  std::string_view tag;
  size_t rank;
  DType dtype;
};
constexpr std::array<LayoutName, 8> kNames{{{VulkanLayout::conv2d, "vk_conv2d", 4, DType::f32},
                                            {VulkanLayout::conv_transpose2d, "vk_conv_transpose2d", 4, DType::f32},
                                            {VulkanLayout::depthwise, "vk_depthwise", 4, DType::f32},
                                            {VulkanLayout::linear, "vk_linear", 2, DType::f32},
                                            {VulkanLayout::channels, "vk_channels", 1, DType::f32},
                                            {VulkanLayout::conv2d_int8, "vk_conv2d_i8", 4, DType::i8},
                                            {VulkanLayout::depthwise_int8, "vk_depthwise_i8", 4, DType::i8},
                                            {VulkanLayout::linear_int8, "vk_linear_i8", 2, DType::i8}}};

const LayoutName& name_of(VulkanLayout layout) {
  for (const LayoutName& name : kNames)
    if (name.layout == layout) return name;
  fail(ExitCode::failure, "unknown vulkan layout {}", static_cast<int>(layout));
}

// a * b, or Error(invalid_input) past 64 bits: shapes come from files.
uint64_t times(uint64_t a, uint64_t b, std::string_view tag) {
  if (a != 0 && b > UINT64_MAX / a) invalid_input("layout '{}': stored size does not fit 64 bits", tag);
  return a * b;
}

uint64_t blocks(int64_t channels) { return (static_cast<uint64_t>(channels) + 3) / 4; }

}  // namespace

bool is_int8_layout(VulkanLayout layout) { return name_of(layout).dtype == DType::i8; }

std::string vulkan_layout_tag(VulkanStorage storage) {
  std::string tag(name_of(storage.layout).tag);
  if (storage.fp16) tag += kFp16Suffix;
  return tag;
}

std::optional<VulkanStorage> parse_vulkan_layout(std::string_view tag) {
  VulkanStorage storage;
  if (tag.size() > kFp16Suffix.size() && tag.substr(tag.size() - kFp16Suffix.size()) == kFp16Suffix) {
    storage.fp16 = true;
    tag.remove_suffix(kFp16Suffix.size());
  }
  for (const LayoutName& name : kNames)
    if (name.tag == tag) {
      if (storage.fp16 && name.dtype != DType::f32) return std::nullopt;  // int8 bytes have no fp16 form
      storage.layout = name.layout;
      return storage;
    }
  return std::nullopt;
}

uint64_t stored_byte_size(DType dtype, const Shape& shape, std::string_view layout) {
  const std::optional<VulkanStorage> vulkan = parse_vulkan_layout(layout);
  if (!vulkan) {
    // Row-major or a permutation of it; the shape was checked (checked_numel) by the caller.
    const std::optional<int64_t> count = checked_numel(shape);
    if (!count) invalid_input("shape {} is too large", shape_str(shape));
    return times(static_cast<uint64_t>(*count), dtype_size(dtype), layout);
  }
  const LayoutName& name = name_of(vulkan->layout);
  if (dtype != name.dtype || shape.size() != name.rank)
    invalid_input("layout '{}' needs a{} {} tensor of rank {}, not {} {}", layout, name.dtype == DType::i8 ? "n" : "",
                  name.dtype == DType::i8 ? "int8" : "float32", name.rank, dtype_name(dtype), shape_str(shape));
  uint64_t elements = 0;
  switch (vulkan->layout) {
    case VulkanLayout::conv2d:
    case VulkanLayout::conv_transpose2d:  // 16 per (output block, input block, tap)
    case VulkanLayout::conv2d_int8:
      elements = times(times(blocks(shape[0]), blocks(shape[1]), layout),
                       times(times(static_cast<uint64_t>(shape[2]), static_cast<uint64_t>(shape[3]), layout), 16, layout),
                       layout);
      break;
    case VulkanLayout::depthwise:  // 4 per (channel block, tap)
    case VulkanLayout::depthwise_int8:
      if (shape[1] != 1) invalid_input("layout '{}' needs one input channel per group, not {}", layout, shape[1]);
      elements = times(times(blocks(shape[0]), static_cast<uint64_t>(shape[2]), layout),
                       times(static_cast<uint64_t>(shape[3]), 4, layout), layout);
      break;
    case VulkanLayout::linear:  // 4 per (output block, k)
      elements = times(blocks(shape[0]), times(static_cast<uint64_t>(shape[1]), 4, layout), layout);
      break;
    case VulkanLayout::channels:
      elements = times(blocks(shape[0]), 4, layout);
      break;
    case VulkanLayout::linear_int8:  // 16 per (output block, block of 4 k)
      elements = times(times(blocks(shape[0]), blocks(shape[1]), layout), 16, layout);
      break;
  }
  return times(elements, name.dtype == DType::i8 ? 1 : vulkan->fp16 ? 2 : 4, layout);
}

}  // namespace mt
