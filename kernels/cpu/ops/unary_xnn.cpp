// Elementwise ops that XNNPACK implements (its *_nc_f32 operators over the whole tensor as one
// row), prelu (XNNPACK when the slope runs along the innermost dim, else a broadcast loop), and
// clamp on integers (a portable loop).
#include <cmath>
#include <limits>

#include "kernels/cpu/engines/broadcast_loop.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/ops/unary_portable.h"
#include "lib/ops/saturating_cast.h"

namespace mt::cpu {
namespace {

using SetupFn = xnn_status (*)(xnn_operator_t, size_t, const float*, float*, pthreadpool_t);

// Runs `op` (already created for one channel) over the whole tensor in its current layout.
void plan_elementwise(NodeContext& c, xnn_operator_t op, SetupFn setup) {
  const Value x = c.xnn_input(0, c.input(0).layout);
  const Value y = c.output(0, x.layout);
  const size_t n = count_of(x);
  c.add_xnn(op, {x, y}, [n, setup](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return setup(o, n, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), pool);
  });
}

using CreateFn = xnn_status (*)(size_t, size_t, size_t, uint32_t, xnn_operator_t*);

void plan_simple(NodeContext& c, CreateFn create, SetupFn setup, const char* call) {
  xnn_operator_t op = c.create_xnn(call, create, 1, 1, 1, 0);
  plan_elementwise(c, op, setup);
}

void plan_clamp_range(NodeContext& c, float low, float high) {
  if (!(low < high)) {
    // XNNPACK needs min < max; min(max(x, low), high) with low >= high is the constant `high`.
    plan_unary_map(c, [low, high](float x) { return std::min(std::max(x, low), high); });
    return;
  }
  xnn_operator_t op = c.create_xnn("xnn_create_clamp_nc_f32", xnn_create_clamp_nc_f32, 1, 1, 1, low, high, 0);
  plan_elementwise(c, op, xnn_setup_clamp_nc_f32);
}

}  // namespace

#define MT_FLOAT_CHECK(name) \
  std::optional<std::string> check_##name(const Graph& graph, const Node& node) { return check_float(graph, node); }

MT_FLOAT_CHECK(relu)
MT_FLOAT_CHECK(sigmoid)
MT_FLOAT_CHECK(hardswish)
MT_FLOAT_CHECK(leaky_relu)
MT_FLOAT_CHECK(elu)
MT_FLOAT_CHECK(sqrt)
MT_FLOAT_CHECK(neg)
MT_FLOAT_CHECK(abs)
MT_FLOAT_CHECK(floor)
MT_FLOAT_CHECK(ceil)
MT_FLOAT_CHECK(prelu)
#undef MT_FLOAT_CHECK

void plan_relu(NodeContext& c) { plan_clamp_range(c, 0.0f, std::numeric_limits<float>::infinity()); }

// Integer tensors too (ONNX Clip on integers; quantized int8 nodes go to ops_int8.h instead).
std::optional<std::string> check_clamp(const Graph& graph, const Node& node) {
  return check_dtypes(graph, node, {DType::f32, DType::i8, DType::u8, DType::i32, DType::i64});
}

namespace {

// Integer clamp: the bounds rounded inward to whole numbers within T's range, as the reference.
template <typename T>
void plan_clamp_integers(NodeContext& c) {
  const T low = saturating_cast<T>(std::ceil(attr_float(c.node(), "min")));
  const T high = saturating_cast<T>(std::floor(attr_float(c.node(), "max")));
  plan_unary_map<T>(c, [low, high](T x) { return std::min(std::max(x, low), high); });
}

}  // namespace

void plan_clamp(NodeContext& c) {
  switch (c.input_info(0).dtype) {
    case DType::i8: plan_clamp_integers<int8_t>(c); return;
    case DType::u8: plan_clamp_integers<uint8_t>(c); return;
    case DType::i32: plan_clamp_integers<int32_t>(c); return;
    case DType::i64: plan_clamp_integers<int64_t>(c); return;
    default: plan_clamp_range(c, attr_f32(c.node(), "min"), attr_f32(c.node(), "max"));
  }
}

void plan_sigmoid(NodeContext& c) {
  plan_simple(c, xnn_create_sigmoid_nc_f32, xnn_setup_sigmoid_nc_f32, "xnn_create_sigmoid_nc_f32");
}
void plan_sqrt(NodeContext& c) {
  plan_simple(c, xnn_create_square_root_nc_f32, xnn_setup_square_root_nc_f32, "xnn_create_square_root_nc_f32");
}
void plan_neg(NodeContext& c) {
  plan_simple(c, xnn_create_negate_nc_f32, xnn_setup_negate_nc_f32, "xnn_create_negate_nc_f32");
}
void plan_abs(NodeContext& c) { plan_simple(c, xnn_create_abs_nc_f32, xnn_setup_abs_nc_f32, "xnn_create_abs_nc_f32"); }
void plan_floor(NodeContext& c) {
  plan_simple(c, xnn_create_floor_nc_f32, xnn_setup_floor_nc_f32, "xnn_create_floor_nc_f32");
}
void plan_ceil(NodeContext& c) {
  plan_simple(c, xnn_create_ceiling_nc_f32, xnn_setup_ceiling_nc_f32, "xnn_create_ceiling_nc_f32");
}

void plan_leaky_relu(NodeContext& c) {
  const float alpha = attr_f32(c.node(), "alpha");
  xnn_operator_t op = c.try_create_xnn(xnn_create_leaky_relu_nc_f32, 1, 1, 1, alpha, 0);
  if (op == nullptr) {
    plan_unary_map(c, [alpha](float x) { return x >= 0.0f ? x : alpha * x; });
    return;
  }
  plan_elementwise(c, op, xnn_setup_leaky_relu_nc_f32);
}

void plan_elu(NodeContext& c) {
  const float alpha = attr_f32(c.node(), "alpha");
  // XNNPACK takes only positive normal alphas.
  xnn_operator_t op = c.try_create_xnn(xnn_create_elu_nc_f32, 1, 1, 1, alpha, 0);
  if (op == nullptr) {
    plan_unary_map(c, [alpha](float x) { return x > 0.0f ? x : alpha * vm::expm1(x); });
    return;
  }
  plan_elementwise(c, op, xnn_setup_elu_nc_f32);
}

void plan_prelu(NodeContext& c) {
  const Value x0 = c.input(0);
  const Layout layout = x0.layout;
  const size_t rank = x0.shape.size();
  const Shape slope_shape = c.input_info(1).shape;
  Shape padded(rank - slope_shape.size(), 1);
  padded.insert(padded.end(), slope_shape.begin(), slope_shape.end());
  const Shape x_physical = physical_shape(x0.shape, layout);
  const Shape slope_physical = physical_shape(padded, layout);

  // XNNPACK's prelu takes one slope per channel of an [n, channels] matrix: the slope must vary
  // only along the innermost physical dim.
  bool per_channel = c.is_constant(1) && rank > 0;
  for (size_t k = 0; k + 1 < rank; ++k) per_channel = per_channel && slope_physical[k] == 1;
  if (per_channel) {
    const size_t channels = static_cast<size_t>(x_physical.back());
    auto* slopes = static_cast<float*>(c.keep(channels * sizeof(float)));
    const float* source = c.constant(1).as<float>().data();
    for (size_t i = 0; i < channels; ++i) slopes[i] = slope_physical.back() == 1 ? source[0] : source[i];
    if (xnn_operator_t op = c.try_create_xnn(xnn_create_prelu_nc_f32, channels, channels, channels, slopes, 0)) {
      c.count_packed(channels * sizeof(float));
      const Value x = c.xnn_input(0, layout);
      const Value y = c.output(0, layout);
      const size_t rows = channels == 0 ? 0 : count_of(x) / channels;
      c.add_xnn(op, {x, y}, [rows](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
        return xnn_setup_prelu_nc_f32(o, rows, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), pool);
      });
      return;
    }
  }
  const Value x = c.input(0, layout);
  const Value slope = c.input(1, trailing_layout(layout, slope_shape.size()));
  const Value y = c.output(0, layout);
  const BroadcastLoop loop(x_physical, x_physical, slope_physical);
  c.add_kernel({x, slope, y}, [loop](Pointers p, ThreadPool* pool) {
    loop.run(static_cast<const float*>(p[0]), static_cast<const float*>(p[1]), static_cast<float*>(p[2]),
             [](float v, float s) { return v < 0.0f ? v * s : v; }, pool);
  });
}

}  // namespace mt::cpu
