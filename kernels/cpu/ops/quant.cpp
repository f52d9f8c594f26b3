// quantize (float32 -> int8, engines/int8_quantize.h) and dequantize (int8 -> float32) with the
// per-tensor scale and zero point of the int8 side, elementwise in any layout (a quantize read by
// an int8 conv writes NHWC). Rounding is half to even (nearbyint in the default rounding mode), as
// XNNPACK's int8 operators round.
#include <cmath>

#include "kernels/cpu/engines/int8_quantize.h"
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
  const QuantizeParams params{.scale = q.scales[0], .zero_point = q.zero_points[0]};
  const bool avx512 = c.int8_vnni();  // int8_quantize.h's vector path (equal results)
  const Value x = c.input(0);
  // A model's NCHW input that an int8 conv reads (in NHWC): reordered while it is quantized.
  const std::optional<size_t> consumer = c.sole_consumer(0);
  const bool to_nhwc =
      x.shape.size() == 4 && is_identity(x.layout) && consumer && c.graph().nodes[*consumer].op == "conv2d";
  const Value y = c.output(0, to_nhwc ? nhwc_layout() : x.layout);
  const size_t n = count_of(x);
  if (to_nhwc) {
    const auto batch = static_cast<size_t>(x.shape[0]), channels = static_cast<size_t>(x.shape[1]);
    const auto pixels = static_cast<size_t>(x.shape[2] * x.shape[3]);
    c.add_kernel({x, y}, [=](Pointers p, ThreadPool* pool) {
      int8_quantize_to_nhwc(static_cast<const float*>(p[0]), static_cast<int8_t*>(p[1]), batch, channels, pixels,
                            params, avx512, pool);
    });
    return;
  }
  c.add_kernel({x, y}, [=](Pointers p, ThreadPool* pool) {
    int8_quantize(static_cast<const float*>(p[0]), static_cast<int8_t*>(p[1]), n, params, avx512, pool);
  });
}

void plan_dequantize(NodeContext& c) {
  const QuantParams& q = *c.input_info(0).quant;
  const float scale = q.scales[0];
  const int32_t zero_point = q.zero_points[0];
  const Value x = c.input(0);
  const Value y = c.output(0, x.layout);
  const size_t n = count_of(x);
  c.add_kernel({x, y}, [=](Pointers p, ThreadPool* pool) {
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
