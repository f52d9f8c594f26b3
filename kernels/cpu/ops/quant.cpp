// quantize (float32 -> int8) and dequantize (int8 -> float32) with the per-tensor scale and zero
// point of the int8 side, elementwise in any layout. Rounding is half to even (nearbyint in the
// default rounding mode), as XNNPACK's int8 operators round.
#include <cmath>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

std::optional<std::string> check_per_tensor(const TensorInfo& info) {
  if (!info.quant || info.quant->scales.size() != 1 || info.quant->zero_points.size() != 1 || info.quant->axis >= 0)
    return "tensor '" + info.name + "' needs per-tensor quantization parameters";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_quantize(const Graph& graph, const Node& node) {
  if (graph.tensor(node.inputs[0]).dtype != DType::f32) return std::string("input must be float32");
  return check_per_tensor(graph.tensor(node.outputs[0]));
}

std::optional<std::string> check_dequantize(const Graph& graph, const Node& node) {
  return check_per_tensor(graph.tensor(node.inputs[0]));
}

void plan_quantize(NodeContext& c) {
  const QuantParams& q = *c.output_info(0).quant;
  const float scale = q.scales[0];
  const auto zero_point = static_cast<float>(q.zero_points[0]);
  const Value x = c.input(0);
  const Value y = c.output(0, x.layout);
  const size_t n = count_of(x);
  c.add_kernel({x, y}, [=](Pointers p, pthreadpool_t pool) {
    const auto* in = static_cast<const float*>(p[0]);
    auto* out = static_cast<int8_t*>(p[1]);
    const float low = -128.0f - zero_point, high = 127.0f - zero_point;
    parallel_chunks(pool, n, 16384, [&](size_t begin, size_t end) {
      // Locals, not captures: an int8 store might change a captured value as far as GCC knows,
      // so it reloaded them per element instead of vectorizing the loop.
      const float* src = in;
      int8_t* dst = out;
      const float s = scale, zero = zero_point, lo = low, hi = high;
      for (size_t i = begin; i < end; ++i) {
        float v = src[i] / s;
        v = v != v ? 0.0f : v;  // NaN quantizes to the zero point
        v = v < lo ? lo : (v > hi ? hi : v);
        // Round half to even as nearbyint does, without a libm call per element (so the loop
        // vectorizes): adding and subtracting 1.5 * 2^23 rounds any |v| < 2^22 in the default
        // rounding mode, and |v| <= 255 here.
        v = (v + 0x1.8p23f) - 0x1.8p23f;
        dst[i] = static_cast<int8_t>(v + zero);
      }
    });
  });
}

void plan_dequantize(NodeContext& c) {
  const QuantParams& q = *c.input_info(0).quant;
  const float scale = q.scales[0];
  const int32_t zero_point = q.zero_points[0];
  const Value x = c.input(0);
  const Value y = c.output(0, x.layout);
  const size_t n = count_of(x);
  c.add_kernel({x, y}, [=](Pointers p, pthreadpool_t pool) {
    const auto* in = static_cast<const int8_t*>(p[0]);
    auto* out = static_cast<float*>(p[1]);
    parallel_chunks(pool, n, 16384, [&](size_t begin, size_t end) {
      const int8_t* src = in;  // locals, as in quantize
      float* dst = out;
      const float s = scale;
      const int32_t zero = zero_point;
      for (size_t i = begin; i < end; ++i) dst[i] = s * static_cast<float>(static_cast<int32_t>(src[i]) - zero);
    });
  });
}

}  // namespace mt::cpu
