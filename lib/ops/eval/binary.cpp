// Reference kernels of the binary family: float32 for every op, int64/int32 for all but pow
// (shape arithmetic evaluated by constant folding).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "lib/ops/broadcast.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

enum class BinaryOp { add, sub, mul, div, pow, max, min };

// Integer arithmetic wraps modulo 2^bits (computed unsigned: signed overflow is undefined in C++).
template <typename T>
T wrap(std::make_unsigned_t<T> value) {
  return static_cast<T>(value);
}

template <typename T>
T apply_int(const Node& node, BinaryOp op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case BinaryOp::add: return wrap<T>(static_cast<U>(a) + static_cast<U>(b));
    case BinaryOp::sub: return wrap<T>(static_cast<U>(a) - static_cast<U>(b));
    case BinaryOp::mul: return wrap<T>(static_cast<U>(a) * static_cast<U>(b));
    case BinaryOp::div:
      if (b == 0) invalid_input("node '{}' (div): integer division by zero", node.name);
      // The one quotient that overflows: MIN / -1 wraps to MIN.
      if (b == -1) return wrap<T>(U{0} - static_cast<U>(a));
      return a / b;  // C++ truncates toward zero, like ONNX integer Div
    case BinaryOp::max: return std::max(a, b);
    case BinaryOp::min: return std::min(a, b);
    case BinaryOp::pow: break;
  }
  unsupported("node '{}' ({}): the reference kernel supports float32 only", node.name, node.op);
}

float apply_float(BinaryOp op, float a, float b) {
  switch (op) {
    case BinaryOp::add: return a + b;
    case BinaryOp::sub: return a - b;
    case BinaryOp::mul: return a * b;
    case BinaryOp::div: return a / b;
    case BinaryOp::pow: return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    // NaN wins, as in numpy.maximum and torch.maximum.
    case BinaryOp::max: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : std::max(a, b);
    case BinaryOp::min: return std::isnan(a) || std::isnan(b) ? std::numeric_limits<float>::quiet_NaN() : std::min(a, b);
  }
  return 0;
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

template <BinaryOp Op>
void binary_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const DType dtype = inputs[0].info->dtype;
  require_dtype(node, *inputs[1].info, dtype);
  // add carries the fused clamp; other ops have no such attributes.
  ActivationBounds bounds;
  if constexpr (Op == BinaryOp::add) bounds = activation_bounds(node);
  switch (dtype) {
    case DType::f32:
      broadcast_apply<float>(inputs, outputs, [&](float a, float b) {
        const float y = apply_float(Op, a, b);
        return bounds.active() ? static_cast<float>(bounds.apply(y)) : y;
      });
      return;
    case DType::i64:
    case DType::i32: {
      if (bounds.active()) unsupported("node '{}' ({}): act_min/act_max are supported on float32 only", node.name, node.op);
      if (Op == BinaryOp::pow) require_dtype(node, *inputs[0].info, DType::f32);
      if (dtype == DType::i64)
        broadcast_apply<int64_t>(inputs, outputs, [&](int64_t a, int64_t b) { return apply_int(node, Op, a, b); });
      else
        broadcast_apply<int32_t>(inputs, outputs, [&](int32_t a, int32_t b) { return apply_int(node, Op, a, b); });
      return;
    }
    default:
      unsupported("node '{}' ({}): the reference kernel supports float32, int64 and int32, tensor '{}' is {}",
                  node.name, node.op, inputs[0].info->name, dtype_name(dtype));
  }
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
}

}  // namespace mt::reference
