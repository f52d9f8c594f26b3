// add, sub, mul, div, max, min, pow with numpy broadcasting. Float tensors of rank <= 6 use
// XNNPACK's *_nd_f32 operators (add keeps its fused clamp); integers, pow and higher ranks use a
// broadcast loop. Both operands are read in the output's layout, so NHWC activations meet
// per-channel constants ([C,1,1] is [1,1,1,C] in NHWC: no copy) without a layout change.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/engines/broadcast_loop.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"

namespace mt::cpu {
namespace {

using XnnSetup = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const float*,
                                const float*, float*, pthreadpool_t);

// The op's XNNPACK operator and its setup function, or {nullptr, nullptr} if XNNPACK has none.
std::pair<xnn_operator_t, XnnSetup> create_xnn(NodeContext& c) {
  const std::string& op = c.node().op;
  xnn_operator_t result = nullptr;
  const float inf = std::numeric_limits<float>::infinity();
  if (op == "add") {
    c.check(xnn_create_add_nd_f32(attr_f32(c.node(), "act_min"), attr_f32(c.node(), "act_max"), 0, &result),
            "xnn_create_add_nd_f32");
    return {result, xnn_setup_add_nd_f32};
  }
  if (op == "sub") {
    c.check(xnn_create_subtract_nd_f32(-inf, inf, 0, &result), "xnn_create_subtract_nd_f32");
    return {result, xnn_setup_subtract_nd_f32};
  }
  if (op == "mul") {
    c.check(xnn_create_multiply_nd_f32(-inf, inf, 0, &result), "xnn_create_multiply_nd_f32");
    return {result, xnn_setup_multiply_nd_f32};
  }
  if (op == "div") {
    c.check(xnn_create_divide_nd_f32(-inf, inf, 0, &result), "xnn_create_divide_nd_f32");
    return {result, xnn_setup_divide_nd_f32};
  }
  if (op == "max") {
    c.check(xnn_create_maximum_nd_f32(0, &result), "xnn_create_maximum_nd_f32");
    return {result, xnn_setup_maximum_nd_f32};
  }
  if (op == "min") {
    c.check(xnn_create_minimum_nd_f32(0, &result), "xnn_create_minimum_nd_f32");
    return {result, xnn_setup_minimum_nd_f32};
  }
  return {nullptr, nullptr};
}

// Integer division truncates toward zero (ONNX); x / 0 gives 0 instead of trapping.
template <typename T>
T int_divide(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));  // wraps for the minimum
  return a / b;
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
  auto step = [&](auto fn) {
    c.add_kernel(values, [loop, fn](Pointers p, pthreadpool_t pool) {
      loop.run(static_cast<const T*>(p[0]), static_cast<const T*>(p[1]), static_cast<T*>(p[2]), fn, pool);
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
    step([](T a, T b) { return static_cast<T>(std::pow(a, b)); });
  }
}

}  // namespace

std::optional<std::string> check_binary(const Graph& graph, const Node& node) {
  if (node.op == "pow") return check_float(graph, node);
  return check_dtypes(graph, node, {DType::f32, DType::i32, DType::i64});
}

Layout binary_output_layout(NodeContext& c) {
  const Shape& out_shape = c.output_info(0).shape;
  for (bool constants : {false, true})
    for (size_t i = 0; i < 2; ++i)
      if (c.is_constant(i) == constants && c.input_info(i).shape == out_shape) return c.input(i).layout;
  return identity_layout(out_shape.size());
}

void plan_binary(NodeContext& c) {
  const Shape& out_shape = c.output_info(0).shape;
  const size_t rank = out_shape.size();
  const Layout layout = binary_output_layout(c);

  Shape physical[2];
  for (size_t i = 0; i < 2; ++i) {
    const Shape& shape = c.input_info(i).shape;
    Shape padded(rank - shape.size(), 1);
    padded.insert(padded.end(), shape.begin(), shape.end());
    physical[i] = physical_shape(padded, layout);
  }
  const Shape out_physical = physical_shape(out_shape, layout);
  const DType dtype = c.output_info(0).dtype;

  if (dtype == DType::f32 && rank <= XNN_MAX_TENSOR_DIMS && c.node().op != "pow") {
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
  const BroadcastLoop loop(out_physical, physical[0], physical[1]);
  switch (dtype) {
    case DType::f32: add_loop<float>(c, {a, b, y}, loop); break;
    case DType::i32: add_loop<int32_t>(c, {a, b, y}, loop); break;
    case DType::i64: add_loop<int64_t>(c, {a, b, y}, loop); break;
    default: unsupported("node '{}': dtype {} not supported", c.node().name, dtype_name(dtype));
  }
}

}  // namespace mt::cpu
