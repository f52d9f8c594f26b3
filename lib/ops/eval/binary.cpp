// Reference kernels of the binary family on float32 and on plain integers (int8, uint8, int32,
// int64: integer graphs, and shape arithmetic evaluated by constant folding); max, min and mod
// (fmod) also on float16, computed in float32, where they are exact.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "lib/core/float16.h"
#include "lib/ops/broadcast.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

enum class BinaryOp { add, sub, mul, div, pow, max, min, mod, fmod, shift_left, shift_right };

// Integer arithmetic wraps modulo 2^bits (computed unsigned: signed overflow is undefined in C++).
template <typename T>
T wrap(std::make_unsigned_t<T> value) {
  return static_cast<T>(value);
}

// a^b by squaring, wrapping like the other integer ops. A negative exponent gives the real power
// truncated toward zero: 1 and -1 keep their magnitude, every other base gives 0.
template <typename T>
T int_pow(const Node& node, T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) {
      if (a == 0) invalid_input("node '{}' (pow): 0 to a negative integer power", node.name);
      if (a == 1) return 1;
      if (a == -1) return (b % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  U result = 1, base = static_cast<U>(a);
  for (auto e = static_cast<U>(b); e != 0; e >>= 1) {
    if (e & 1U) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
  }
  return wrap<T>(result);
}

template <typename T>
T apply_int(const Node& node, BinaryOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  auto nonzero_divisor = [&] {
    if (b == 0) invalid_input("node '{}' ({}): integer division by zero", node.name, node.op);
  };
  switch (op) {
    case BinaryOp::add: return wrap<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    case BinaryOp::sub: return wrap<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
    case BinaryOp::mul: return wrap<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    case BinaryOp::div:
      nonzero_divisor();
      // The one quotient that overflows: MIN / -1 wraps to MIN.
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return wrap<T>(static_cast<U>(U{0} - static_cast<U>(a)));
      return static_cast<T>(a / b);  // C++ truncates toward zero, like ONNX integer Div
    case BinaryOp::pow: return int_pow(node, a, b);
    case BinaryOp::max: return std::max(a, b);
    case BinaryOp::min: return std::min(a, b);
    case BinaryOp::mod:
    case BinaryOp::fmod: {
      nonzero_divisor();
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;              // MIN % -1 overflows in C++, and the remainder is 0
        const T r = static_cast<T>(a % b);  // truncated: the sign of a (fmod)
        // Floored (Python's %): the sign of b.
        return op == BinaryOp::mod && r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
      } else {
        return static_cast<T>(a % b);
      }
    }
    case BinaryOp::shift_left:
    case BinaryOp::shift_right: {
      // Bits shifted past the width are lost (C++ leaves shifts by the width or more undefined).
      const auto bits = static_cast<U>(a), shift = static_cast<U>(b);
      if (static_cast<size_t>(shift) >= sizeof(T) * 8) return 0;
      return static_cast<T>(op == BinaryOp::shift_left ? bits << shift : bits >> shift);
    }
  }
  return 0;
}

float apply_float(const Node& node, BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::pow: return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    // NaN wins, as in numpy.maximum and torch.maximum.
    case BinaryOp::max: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : std::max(a, b);
    case BinaryOp::min: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : std::min(a, b);
    case BinaryOp::fmod: return std::fmod(a, b);  // exact in float: no rounding
    case BinaryOp::mod:
    case BinaryOp::shift_left:
    case BinaryOp::shift_right: break;  // integers only (the schema refuses float operands)
  }
  unsupported("node '{}' ({}): float32 operands are not supported", node.name, node.op);
}

template <typename T, typename Fn>
void broadcast_apply(std::span<const ConstView> inputs, std::span<const MutView> outputs, Fn fn) {
  const Shape& out_shape = outputs[0].info->shape;
  const std::array<std::vector<int64_t>, 2> strides{broadcast_strides(inputs[0].info->shape, out_shape),
                                                    broadcast_strides(inputs[1].info->shape, out_shape)};
  const T* a = inputs[0].as<T>();
  const T* b = inputs[1].as<T>();
  T* y = outputs[0].as<T>();
  for_each_broadcast(out_shape, strides,
                     [&](int64_t i, const std::array<int64_t, 2>& offsets) { y[i] = fn(a[offsets[0]], b[offsets[1]]); });
}

template <typename T>
void integer_apply(const Node& node, BinaryOp op, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  broadcast_apply<T>(inputs, outputs, [&](T a, T b) { return apply_int(node, op, a, b); });
}

void run_binary(const Node& node, BinaryOp op, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const DType dtype = inputs[0].info->dtype;
  require_dtype(node, *inputs[1].info, dtype);
  // add carries the fused clamp; other ops have no such attributes.
  ActivationBounds bounds;
  if (op == BinaryOp::add) bounds = activation_bounds(node);
  if (bounds.active() && dtype != DType::f32)
    unsupported("node '{}' ({}): act_min/act_max are supported on float32 only", node.name, node.op);
  switch (dtype) {
    case DType::f32:
      broadcast_apply<float>(inputs, outputs, [&](float a, float b) {
        const float y = apply_float(node, op, a, b);
        return bounds.active() ? static_cast<float>(bounds.apply(y)) : y;
      });
      return;
    // int8 here is plain integers: quantized int8 runs the kernels of quantized_elementwise.cpp.
    case DType::f16:
      if (op != BinaryOp::max && op != BinaryOp::min && op != BinaryOp::fmod) break;
      broadcast_apply<uint16_t>(inputs, outputs, [&](uint16_t a, uint16_t b) {
        return float_to_half(apply_float(node, op, half_to_float(a), half_to_float(b)));
      });
      return;
    case DType::i8: integer_apply<int8_t>(node, op, inputs, outputs); return;
    case DType::u8: integer_apply<uint8_t>(node, op, inputs, outputs); return;
    case DType::i32: integer_apply<int32_t>(node, op, inputs, outputs); return;
    case DType::i64: integer_apply<int64_t>(node, op, inputs, outputs); return;
    default: break;
  }
  unsupported(
      "node '{}' ({}): the reference kernel supports float32 and integers (max, min and fmod also float16), "
      "tensor '{}' is {}",
      node.name, node.op, inputs[0].info->name, dtype_name(dtype));
}

template <BinaryOp Op>
void binary_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  run_binary(node, Op, inputs, outputs);
}

void mod(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  run_binary(node, attr_int(node, "fmod") != 0 ? BinaryOp::fmod : BinaryOp::mod, inputs, outputs);
}

void bit_shift(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::u8);
  run_binary(node, attr_string(node, "direction") == "left" ? BinaryOp::shift_left : BinaryOp::shift_right, inputs,
             outputs);
}

}  // namespace

void register_binary_kernels(KernelTable& table) {
  table.add("add", binary_kernel<BinaryOp::add>);
  table.add("sub", binary_kernel<BinaryOp::sub>);
  table.add("mul", binary_kernel<BinaryOp::mul>);
  table.add("div", binary_kernel<BinaryOp::div>);
  table.add("pow", binary_kernel<BinaryOp::pow>);
  table.add("max", binary_kernel<BinaryOp::max>);
  table.add("min", binary_kernel<BinaryOp::min>);
  table.add("mod", mod);
  table.add("bit_shift", bit_shift);
}

}  // namespace mt::reference
