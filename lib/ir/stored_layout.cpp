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

struct CpuLayoutName {
  CpuLayout layout;
  std::string_view tag;
  DType dtype;
  size_t min_rank, max_rank;  // 2..4: linear or conv weights; 4..4: conv weights only
};
constexpr std::array<CpuLayoutName, 10> kCpuNames{
    {{CpuLayout::gemm, "cpu_gemm", DType::f32, 2, 4},
     {CpuLayout::winograd4, "cpu_winograd4", DType::f32, 4, 4},
     {CpuLayout::winograd2, "cpu_winograd2", DType::f32, 4, 4},
     {CpuLayout::winograd4_gemm, "cpu_winograd4_gemm", DType::f32, 4, 4},
     {CpuLayout::winograd2_gemm, "cpu_winograd2_gemm", DType::f32, 4, 4},
     {CpuLayout::vnni_gemm, "cpu_vnni_gemm", DType::i8, 2, 4},
     {CpuLayout::vnni_gemm_gathered, "cpu_vnni_gemm_gathered", DType::i8, 4, 4},
     {CpuLayout::vnni_depthwise, "cpu_vnni_depthwise", DType::i8, 4, 4},
     {CpuLayout::depthwise, "cpu_depthwise", DType::f32, 4, 4},
     {CpuLayout::stem, "cpu_stem", DType::f32, 4, 4}}};

const CpuLayoutName& name_of(CpuLayout layout) {
  for (const CpuLayoutName& name : kCpuNames)
    if (name.layout == layout) return name;
  fail(ExitCode::failure, "unknown cpu layout {}", static_cast<int>(layout));
}

constexpr uint64_t kPanel = 32;  // output columns per panel of the GEMM layouts

uint64_t round_up(uint64_t value, uint64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// A float32 GEMM block: the panels of a k x n matrix, then n padded bias floats.
uint64_t gemm_bytes(uint64_t k, uint64_t n, std::string_view tag) {
  return times(times(round_up(n, kPanel), k + 1, tag), 4, tag);
}

// An int8 VNNI GEMM block: taps runs of `channels` bytes rounded up to 4 per column, then an int32
// bias and a float32 multiplier per column.
uint64_t vnni_gemm_bytes(uint64_t taps, uint64_t channels, uint64_t n, std::string_view tag) {
  return times(round_up(n, kPanel), times(taps, round_up(channels, 4), tag) + 8, tag);
}

uint64_t cpu_byte_size(DType dtype, const Shape& shape, std::string_view tag, const CpuLayoutName& name) {
  if (dtype != name.dtype || shape.size() < name.min_rank || shape.size() > name.max_rank || shape.size() == 3)
    invalid_input("layout '{}' needs a{} {} tensor of rank {}, not {} {}", tag, name.dtype == DType::i8 ? "n" : "",
                  dtype_name(name.dtype), name.min_rank == name.max_rank ? "4" : "2 or 4", dtype_name(dtype),
                  shape_str(shape));
  std::array<uint64_t, 4> d{};
  for (size_t i = 0; i < shape.size(); ++i) d[i] = static_cast<uint64_t>(shape[i]);
  const uint64_t kernel = shape.size() == 4 ? times(d[2], d[3], tag) : 1;  // taps of a conv weight
  switch (name.layout) {
    case CpuLayout::gemm: return gemm_bytes(times(d[1], kernel, tag), d[0], tag);
    case CpuLayout::winograd4:
    case CpuLayout::winograd2:
    case CpuLayout::winograd4_gemm:
    case CpuLayout::winograd2_gemm: {
      if (d[2] != 3 || d[3] != 3) invalid_input("layout '{}' needs a 3x3 kernel, not {}", tag, shape_str(shape));
      const bool f4 = name.layout == CpuLayout::winograd4 || name.layout == CpuLayout::winograd4_gemm;
      const uint64_t points = f4 ? 36 : 16;
      const bool gemm = name.layout == CpuLayout::winograd4_gemm || name.layout == CpuLayout::winograd2_gemm;
      return times(points, gemm ? gemm_bytes(d[1], d[0], tag) : times(times(d[0], d[1], tag), 4, tag), tag);
    }
    case CpuLayout::vnni_gemm: return vnni_gemm_bytes(kernel, d[1], d[0], tag);
    case CpuLayout::vnni_gemm_gathered: return vnni_gemm_bytes(1, times(d[1], kernel, tag), d[0], tag);
    case CpuLayout::vnni_depthwise: {
      if (d[1] != 1 || d[2] != d[3])
        invalid_input("layout '{}' needs one input channel per group and a square kernel, not {}", tag,
                      shape_str(shape));
      // Per 16 channels: kernel rows x ceil(k/2) pairs x 2 int16 taps; then int32 bias and float32 multiplier.
      const uint64_t channels = round_up(d[0], 16);
      return times(channels, times(times(d[2], (d[2] + 1) / 2, tag), 4, tag) + 8, tag);
    }
    case CpuLayout::depthwise:  // per 16 channels: the taps' 16 floats each, then 16 biases
      if (d[1] != 1) invalid_input("layout '{}' needs one input channel per group, not {}", tag, shape_str(shape));
      return times(times(round_up(d[0], 16), kernel + 1, tag), 4, tag);
    case CpuLayout::stem:  // per tap of OHWI's kH kW C, then for the bias: ceil(M/16) x 16 floats
      return times(times(round_up(d[0], 16), times(kernel, d[1], tag) + 1, tag), 4, tag);
  }
  fail(ExitCode::failure, "unknown cpu layout '{}'", tag);
}

}  // namespace

std::string_view cpu_layout_tag(CpuLayout layout) { return name_of(layout).tag; }

std::optional<CpuLayout> parse_cpu_layout(std::string_view tag) {
  for (const CpuLayoutName& name : kCpuNames)
    if (name.tag == tag) return name.layout;
  return std::nullopt;
}
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
  if (const std::optional<CpuLayout> cpu = parse_cpu_layout(layout))
    return cpu_byte_size(dtype, shape, layout, name_of(*cpu));
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
