// Op schemas of the quantization family: quantize (float32 -> int8) and dequantize
// (int8 -> float32). The affine parameters are the int8 tensor's own QuantParams (the output
// of quantize, the input of dequantize), so the ops carry no attributes.
#include "lib/ops/registry.h"

namespace mt {
namespace {

std::vector<TensorType> infer_quantize(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  if (x.dtype != DType::f32) context.fail("input '{}' is {}, expected float32", x.name, dtype_name(x.dtype));
  return {{DType::i8, x.shape}};
}

std::vector<TensorType> infer_dequantize(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  if (x.dtype != DType::i8) context.fail("input '{}' is {}, expected int8", x.name, dtype_name(x.dtype));
  if (!x.quant || x.quant->axis >= 0 || x.quant->scales.size() != 1)
    context.fail("input '{}' needs per-tensor quantization parameters", x.name);
  return {{DType::f32, x.shape}};
}

}  // namespace

void register_quant_ops(OpRegistry& registry) {
  registry.add({"quantize",
                "float32 X to int8: clamp(round_half_even(X / scale) + zero_point, -128, 127), scale and zero "
                "point of the output tensor",
                {"X"},
                false,
                1,
                {},
                infer_quantize});
  registry.add({"dequantize",
                "int8 X to float32: scale * (X - zero_point), scale and zero point of the input tensor",
                {"X"},
                false,
                1,
                {},
                infer_dequantize});
}

}  // namespace mt
