// add, sub, mul, div, max, min, pow, mod, bit_shift with numpy broadcasting, on a broadcast loop
// (compiled for AVX-512 or AVX2 where the plan may use them) on the plan's own threads; float32 max
// and min of rank <= 6 use XNNPACK's *_nd_f32 operators (their NaN rule). max, min and mod on
// float16 are computed in float32, where they are exact, NaN winning as in the reference. Both
// operands are read in the output's layout, so NHWC activations meet per-channel constants ([C,1,1]
// is [1,1,1,C] in NHWC: no copy) without a layout change.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/engines/broadcast_loop.h"
#include "lib/core/float16.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/conv_fusion.h"
#include "kernels/cpu/ops/ops.h"

namespace mt::cpu {
namespace {

using XnnSetup = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const float*,
                                const float*, float*, pthreadpool_t);

// The XNNPACK operator of a float32 max or min and its setup function.
std::pair<xnn_operator_t, XnnSetup> create_xnn(NodeContext& c) {
  if (c.node().op == "max")
    return {c.create_xnn("xnn_create_maximum_nd_f32", xnn_create_maximum_nd_f32, 0), xnn_setup_maximum_nd_f32};
  return {c.create_xnn("xnn_create_minimum_nd_f32", xnn_create_minimum_nd_f32, 0), xnn_setup_minimum_nd_f32};
}

// Integer division truncates toward zero (ONNX); x / 0 gives 0 instead of trapping.
template <typename T>
T int_divide(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));  // wraps for the minimum
  return static_cast<T>(a / b);
}

// The remainder of integer division: floored (the sign of b, ONNX Mod's fmod 0) or truncated (the
// sign of a, fmod 1); x % 0 gives 0 instead of trapping, and MIN % -1 (which overflows) 0.
template <typename T>
T int_remainder(T a, T b, bool floored) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
    const T r = static_cast<T>(a % b);
    return floored && r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
  } else {
    return static_cast<T>(a % b);
  }
}

// a^b by squaring, wrapping; a negative exponent gives the real power truncated toward zero (0
// for every base but 1 and -1, and 0 for 0 rather than trapping).
template <typename T>
T int_pow(T a, T b) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    if (b < 0) return a == 1 ? T{1} : (a == -1 ? static_cast<T>(b % 2 == 0 ? 1 : -1) : T{0});
  }
  U result = 1, base = static_cast<U>(a);
  for (auto e = static_cast<U>(b); e != 0; e >>= 1) {
    if (e & 1U) result = static_cast<U>(result * base);
    base = static_cast<U>(base * base);
  }
  return static_cast<T>(result);
}

// Integer arithmetic wraps modulo 2^bits like numpy, without signed-overflow UB.
template <typename T>
auto wrap(T v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<std::make_unsigned_t<T>>(v);
  } else {
    return v;
  }
}

template <typename T>
void add_loop(NodeContext& c, const std::vector<Value>& values, const BroadcastLoop& loop) {
  const std::string& op = c.node().op;
  // AVX-512 where the packed GEMM runs (the CPU has AVX-512F and the plan permits our AVX-512 code).
  const BroadcastLoop::Isa isa = c.packed_gemm() ? BroadcastLoop::Isa::avx512
                                 : c.avx2_fma()  ? BroadcastLoop::Isa::avx2
                                                 : BroadcastLoop::Isa::baseline;
  auto step = [&](auto fn) {
    c.add_kernel(values, [loop, fn, isa](Pointers p, ThreadPool* pool) {
      loop.run(static_cast<const T*>(p[0]), static_cast<const T*>(p[1]), static_cast<T*>(p[2]), fn, pool, isa);
    });
  };
  if (op == "add") {
    if constexpr (std::is_floating_point_v<T>) {
      const float low = attr_f32(c.node(), "act_min"), high = attr_f32(c.node(), "act_max");
      step([low, high](T a, T b) {
        const T s = a + b;
        return std::min(std::max(s, static_cast<T>(low)), static_cast<T>(high));  // branchless
      });
    } else {
      step([](T a, T b) { return static_cast<T>(wrap(a) + wrap(b)); });
    }
  } else if (op == "sub") {
    step([](T a, T b) { return static_cast<T>(wrap(a) - wrap(b)); });
  } else if (op == "mul") {
    step([](T a, T b) { return static_cast<T>(wrap(a) * wrap(b)); });
  } else if (op == "div") {
    if constexpr (std::is_floating_point_v<T>) {
      step([](T a, T b) { return a / b; });
    } else {
      step([](T a, T b) { return int_divide(a, b); });
    }
  } else if (op == "max") {
    step([](T a, T b) { return a < b ? b : a; });
  } else if (op == "min") {
    step([](T a, T b) { return b < a ? b : a; });
  } else if (op == "pow") {
    if constexpr (std::is_floating_point_v<T>) {
      step([](T a, T b) { return static_cast<T>(std::pow(a, b)); });
    } else {
      step([](T a, T b) { return int_pow(a, b); });
    }
  } else if (op == "mod") {
    if constexpr (std::is_floating_point_v<T>) {
      step([](T a, T b) { return std::fmod(a, b); });  // the schema requires fmod 1 for floats
    } else if (attr_int(c.node(), "fmod") != 0) {
      step([](T a, T b) { return int_remainder(a, b, false); });
    } else {
      step([](T a, T b) { return int_remainder(a, b, true); });
    }
  } else if (op == "bit_shift") {
    if constexpr (std::is_unsigned_v<T>) {
      // Bits shifted past the width are lost (C++ leaves such shifts undefined).
      constexpr size_t kBits = sizeof(T) * 8;
      if (attr_string(c.node(), "direction") == "left") {
        step([](T a, T b) { return static_cast<size_t>(b) >= kBits ? T{0} : static_cast<T>(a << b); });
      } else {
        step([](T a, T b) { return static_cast<size_t>(b) >= kBits ? T{0} : static_cast<T>(a >> b); });
      }
    } else {
      unsupported("node '{}' (bit_shift): dtype {} not supported", c.node().name, dtype_name(c.output_info(0).dtype));
    }
  }
}

// max, min and mod (fmod 1, as its schema requires for floats) on float16 bit patterns.
void add_half_loop(NodeContext& c, const std::vector<Value>& values, const BroadcastLoop& loop) {
  const std::string& op = c.node().op;
  auto step = [&](auto fn) {
    c.add_kernel(values, [loop, fn](Pointers p, ThreadPool* pool) {
      loop.run(
          static_cast<const uint16_t*>(p[0]), static_cast<const uint16_t*>(p[1]), static_cast<uint16_t*>(p[2]),
          [fn](uint16_t a, uint16_t b) { return float_to_half(fn(half_to_float(a), half_to_float(b))); }, pool);
    });
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (op == "max") {
    step([nan](float a, float b) { return std::isnan(a) || std::isnan(b) ? nan : std::max(a, b); });
  } else if (op == "min") {
    step([nan](float a, float b) { return std::isnan(a) || std::isnan(b) ? nan : std::min(a, b); });
  } else {
    step([](float a, float b) { return std::fmod(a, b); });
  }
}

bool half_op(const std::string& op) { return op == "max" || op == "min" || op == "mod"; }

}  // namespace

std::optional<std::string> check_binary(const Graph& graph, const Node& node) {
  if (half_op(node.op) && graph.tensor(node.outputs[0]).dtype == DType::f16)
    return check_dtypes(graph, node, {DType::f16});
  // bit_shift's schema allows uint8 only; quantized int8 nodes go to ops_int8.h instead.
  return check_dtypes(graph, node, {DType::f32, DType::i8, DType::u8, DType::i32, DType::i64});
}

Layout binary_output_layout(NodeContext& c) {
  const Shape& out_shape = c.output_info(0).shape;
  for (bool constants : {false, true})
    for (size_t i = 0; i < c.num_inputs(); ++i)
      if (c.is_constant(i) == constants && c.input_info(i).shape == out_shape) return c.input(i).layout;
  return identity_layout(out_shape.size());
}

BroadcastOperands plan_broadcast_operands(NodeContext& c) {
  const Shape& out_shape = c.output_info(0).shape;
  BroadcastOperands planned;
  planned.layout = binary_output_layout(c);
  planned.out_physical = physical_shape(out_shape, planned.layout);
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    const Shape& shape = c.input_info(i).shape;
    Shape padded(out_shape.size() - shape.size(), 1);
    padded.insert(padded.end(), shape.begin(), shape.end());
    planned.physical.push_back(physical_shape(padded, planned.layout));
  }
  return planned;
}

namespace {

// A float32 mul of an NCHW tensor by a [1, C, 1, 1] (or [C, 1, 1]) scale whose only reader is a
// pointwise conv that folds the scale into its weights (conv_fusion.h): left to that conv.
bool defer_channel_gate(NodeContext& c) {
  const Shape& out = c.output_info(0).shape;
  if (c.node().op != "mul" || c.output_info(0).dtype != DType::f32 || out.size() != 4 || c.num_inputs() != 2)
    return false;
  const std::optional<size_t> consumer = c.sole_consumer(0);
  if (!consumer || c.graph().nodes[*consumer].inputs.at(0) != c.node().outputs[0]) return false;
  for (size_t i = 0; i < 2; ++i) {
    const Shape& x = c.input_info(i).shape;
    Shape scale = c.input_info(1 - i).shape;
    scale.insert(scale.begin(), 4 - std::min<size_t>(4, scale.size()), 1);
    if (x == out && scale == Shape{1, out[1], 1, 1} && folds_channel_gate(c, *consumer)) {
      c.defer_channel_gate(c.node().inputs[i], c.node().inputs[1 - i]);
      return true;
    }
  }
  return false;
}

}  // namespace

void plan_binary(NodeContext& c) {
  if (defer_channel_gate(c)) return;
  const Shape& out_shape = c.output_info(0).shape;
  const size_t rank = out_shape.size();
  const BroadcastOperands planned = plan_broadcast_operands(c);
  const Layout& layout = planned.layout;
  const std::vector<Shape>& physical = planned.physical;
  const DType dtype = c.output_info(0).dtype;

  // Only max and min stay with XNNPACK. add, sub, mul and div round the same in the loop (one IEEE
  // operation per element, then add's clamp) and run on the plan's own threads: an XNNPACK operator
  // large enough for XNNPACK's threads parks ours and wakes them again after it (EfficientNet-B0's
  // squeeze-excitation muls that no conv absorbs).
  const bool xnnpack = dtype == DType::f32 && (c.node().op == "max" || c.node().op == "min");
  if (xnnpack && rank <= XNN_MAX_TENSOR_DIMS) {
    const auto [op, setup] = create_xnn(c);
    const Value a = c.xnn_input(0, trailing_layout(layout, c.input_info(0).shape.size()));
    const Value b = c.xnn_input(1, trailing_layout(layout, c.input_info(1).shape.size()));
    const Value y = c.output(0, layout);
    std::array<size_t, XNN_MAX_TENSOR_DIMS> shape_a{}, shape_b{};
    for (size_t k = 0; k < rank; ++k) {
      shape_a[k] = static_cast<size_t>(physical[0][k]);
      shape_b[k] = static_cast<size_t>(physical[1][k]);
    }
    // XNNPACK wants at least one dim: a scalar is [1].
    const size_t dims = std::max<size_t>(rank, 1);
    if (rank == 0) shape_a[0] = shape_b[0] = 1;
    c.add_xnn(op, {a, b, y}, [setup = setup, shape_a, shape_b, dims](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
      return setup(o, dims, shape_a.data(), dims, shape_b.data(), static_cast<const float*>(p[0]),
                   static_cast<const float*>(p[1]), static_cast<float*>(p[2]), pool);
    });
    return;
  }

  const Value a = c.input(0, trailing_layout(layout, c.input_info(0).shape.size()));
  const Value b = c.input(1, trailing_layout(layout, c.input_info(1).shape.size()));
  const Value y = c.output(0, layout);
  const BroadcastLoop loop(planned.out_physical, physical[0], physical[1]);
  switch (dtype) {
    case DType::f32: add_loop<float>(c, {a, b, y}, loop); break;
    case DType::i8: add_loop<int8_t>(c, {a, b, y}, loop); break;
    case DType::u8: add_loop<uint8_t>(c, {a, b, y}, loop); break;
    case DType::i32: add_loop<int32_t>(c, {a, b, y}, loop); break;
    case DType::i64: add_loop<int64_t>(c, {a, b, y}, loop); break;
    case DType::f16:
      if (half_op(c.node().op)) {
        add_half_loop(c, {a, b, y}, loop);
        break;
      }
      [[fallthrough]];
    default: unsupported("node '{}': dtype {} not supported", c.node().name, dtype_name(dtype));
  }
}

}  // namespace mt::cpu
