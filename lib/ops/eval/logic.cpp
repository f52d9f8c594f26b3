// Reference kernels of the logic family: comparisons of float32 or integer operands, boolean
// algebra on bool tensors (one byte, 0 or 1; any non-zero byte reads as true), is_nan/is_inf, and
// where on operands of any dtype (elements copied by size).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "lib/ops/broadcast.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

enum class Compare { equal, less, less_or_equal, greater, greater_or_equal };
enum class Boolean { logical_and, logical_or, logical_xor };

// With NaN every ordered comparison and equality is false (IEEE 754, numpy).
template <typename T>
bool compare(Compare how, T a, T b) {
  switch (how) {
    case Compare::equal: return a == b;
    case Compare::less: return a < b;
    case Compare::less_or_equal: return a <= b;
    case Compare::greater: return a > b;
    case Compare::greater_or_equal: return a >= b;
  }
  return false;
}

bool combine(Boolean how, bool a, bool b) {
  switch (how) {
    case Boolean::logical_and: return a && b;
    case Boolean::logical_or: return a || b;
    case Boolean::logical_xor: return a != b;
  }
  return false;
}

// y[i] = fn(a[i'], b[i'']) over A and B broadcast to the output (bool: one byte each).
template <typename T, typename Fn>
void broadcast_to_bool(std::span<const ConstView> inputs, std::span<const MutView> outputs, Fn fn) {
  const Shape& out_shape = outputs[0].info->shape;
  const std::array<std::vector<int64_t>, 2> strides{broadcast_strides(inputs[0].info->shape, out_shape),
                                                    broadcast_strides(inputs[1].info->shape, out_shape)};
  const T* a = inputs[0].as<T>();
  const T* b = inputs[1].as<T>();
  auto* y = outputs[0].as<uint8_t>();
  for_each_broadcast(out_shape, strides, [&](int64_t i, const std::array<int64_t, 2>& offsets) {
    y[i] = fn(a[offsets[0]], b[offsets[1]]) ? 1 : 0;
  });
}

template <Compare How>
void compare_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const DType dtype = inputs[0].info->dtype;
  require_dtype(node, *inputs[1].info, dtype);
  auto run = [&](auto type) {
    using T = decltype(type);
    broadcast_to_bool<T>(inputs, outputs, [](T a, T b) { return compare(How, a, b); });
  };
  switch (dtype) {
    case DType::f32: run(float{}); return;
    case DType::i8: run(int8_t{}); return;
    case DType::u8: run(uint8_t{}); return;
    case DType::i32: run(int32_t{}); return;
    case DType::i64: run(int64_t{}); return;
    case DType::boolean:
      broadcast_to_bool<uint8_t>(inputs, outputs, [](uint8_t a, uint8_t b) { return compare(How, a != 0, b != 0); });
      return;
    case DType::f16: break;
  }
  unsupported("node '{}' ({}): the reference kernel does not compare {} tensors", node.name, node.op,
              dtype_name(dtype));
}

template <Boolean How>
void boolean_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::boolean);
  require_dtype(node, *inputs[1].info, DType::boolean);
  broadcast_to_bool<uint8_t>(inputs, outputs, [](uint8_t a, uint8_t b) { return combine(How, a != 0, b != 0); });
}

// y[i] = fn(x[i]) as a bool, for a bool (logical_not) or float32 (is_nan, is_inf) input.
template <typename T, typename Fn>
void map_to_bool(std::span<const ConstView> inputs, std::span<const MutView> outputs, Fn fn) {
  const T* x = inputs[0].as<T>();
  auto* y = outputs[0].as<uint8_t>();
  const int64_t count = inputs[0].info->numel();
  for (int64_t i = 0; i < count; ++i) y[i] = fn(x[i]) ? 1 : 0;
}

void logical_not(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::boolean);
  map_to_bool<uint8_t>(inputs, outputs, [](uint8_t x) { return x == 0; });
}

void is_nan(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  map_to_bool<float>(inputs, outputs, [](float x) { return std::isnan(x); });
}

void is_inf(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const bool positive = attr_int(node, "detect_positive") != 0;
  const bool negative = attr_int(node, "detect_negative") != 0;
  map_to_bool<float>(inputs, outputs,
                     [positive, negative](float x) { return std::isinf(x) && (x > 0 ? positive : negative); });
}

void where(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::boolean);
  require_dtype(node, *inputs[2].info, inputs[1].info->dtype);
  const Shape& out_shape = outputs[0].info->shape;
  const std::array<std::vector<int64_t>, 3> strides{broadcast_strides(inputs[0].info->shape, out_shape),
                                                    broadcast_strides(inputs[1].info->shape, out_shape),
                                                    broadcast_strides(inputs[2].info->shape, out_shape)};
  const auto* condition = inputs[0].as<uint8_t>();
  const auto* x = inputs[1].as<std::byte>();
  const auto* y = inputs[2].as<std::byte>();
  auto* out = outputs[0].as<std::byte>();
  const size_t size = dtype_size(outputs[0].info->dtype);
  for_each_broadcast(out_shape, strides, [&](int64_t i, const std::array<int64_t, 3>& offsets) {
    const std::byte* chosen = condition[offsets[0]] != 0 ? x + offsets[1] * static_cast<int64_t>(size)
                                                         : y + offsets[2] * static_cast<int64_t>(size);
    std::memcpy(out + i * static_cast<int64_t>(size), chosen, size);
  });
}

}  // namespace

void register_logic_kernels(KernelTable& table) {
  table.add("equal", compare_kernel<Compare::equal>);
  table.add("less", compare_kernel<Compare::less>);
  table.add("less_or_equal", compare_kernel<Compare::less_or_equal>);
  table.add("greater", compare_kernel<Compare::greater>);
  table.add("greater_or_equal", compare_kernel<Compare::greater_or_equal>);
  table.add("logical_and", boolean_kernel<Boolean::logical_and>);
  table.add("logical_or", boolean_kernel<Boolean::logical_or>);
  table.add("logical_xor", boolean_kernel<Boolean::logical_xor>);
  table.add("logical_not", logical_not);
  table.add("is_nan", is_nan);
  table.add("is_inf", is_inf);
  table.add("where", where);
}

}  // namespace mt::reference
