// Reference int8 kernels of the elementwise ops and concat (the oracle of the cpu backend's
// int8 operators): mul, sigmoid, hardswish, silu, hardsigmoid, concat. Per-tensor asymmetric
// parameters on every tensor. mul requantizes its exact int32 product as XNNPACK does; the
// activations dequantize, apply the float function and quantize (one rounding, half to even);
// concat requantizes each input to the output's parameters (a byte copy when they are equal).
#include <cstring>

#include "lib/ops/broadcast.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/int8_arithmetic.h"

namespace mt::reference {
namespace {

// y = requantize((a - za) (b - zb), sa sb / sy): the product is exact in int32.
void mul(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant aq = per_tensor_quant(node, *in[0].info), bq = per_tensor_quant(node, *in[1].info);
  const TensorQuant yq = per_tensor_quant(node, *out[0].info);
  const Shape& ys = out[0].info->shape;
  const std::array<std::vector<int64_t>, 2> strides{broadcast_strides(in[0].info->shape, ys),
                                                    broadcast_strides(in[1].info->shape, ys)};
  const int8_t* a = in[0].as<int8_t>();
  const int8_t* b = in[1].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  const float multiplier = aq.scale * bq.scale / yq.scale;
  for_each_broadcast(ys, strides, [&](int64_t o, const std::array<int64_t, 2>& offsets) {
    const int32_t product = (a[offsets[0]] - aq.zero_point) * (b[offsets[1]] - bq.zero_point);
    y[o] = requantize(product, multiplier, yq.zero_point, -128, 127);
  });
}

template <typename Fn>
void unary(const Node& node, std::span<const ConstView> in, std::span<const MutView> out, Fn fn) {
  const TensorQuant xq = per_tensor_quant(node, *in[0].info), yq = per_tensor_quant(node, *out[0].info);
  const int8_t* x = in[0].as<int8_t>();
  int8_t* y = out[0].as<int8_t>();
  for (int64_t i = 0, n = out[0].info->numel(); i < n; ++i)
    y[i] = quantize_value(fn(dequantize_value(x[i], xq.scale, xq.zero_point)), yq.scale, yq.zero_point);
}

void sigmoid(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  unary(node, in, out, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
}

void hardswish(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  unary(node, in, out, int8_hardswish_function);
}

void silu(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  unary(node, in, out, int8_silu_function);
}

void hardsigmoid(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const auto alpha = static_cast<float>(attr_float(node, "alpha")), beta = static_cast<float>(attr_float(node, "beta"));
  unary(node, in, out, [alpha, beta](float v) { return std::max(0.0f, std::min(1.0f, alpha * v + beta)); });
}

void concat(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const TensorQuant yq = per_tensor_quant(node, *out[0].info);
  const Shape& out_shape = out[0].info->shape;
  const size_t axis = *normalize_axis(attr_int(node, "axis"), out_shape.size());
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= out_shape[d];
  for (size_t d = axis + 1; d < out_shape.size(); ++d) inner *= out_shape[d];
  const int64_t out_row = out_shape[axis] * inner;
  int8_t* y = out[0].as<int8_t>();
  int64_t column = 0;  // where this input starts within an output row
  for (const ConstView& view : in) {
    const TensorQuant xq = per_tensor_quant(node, *view.info);
    const int64_t row = view.info->shape[axis] * inner;
    const int8_t* x = view.as<int8_t>();
    for (int64_t o = 0; o < outer; ++o) {
      int8_t* dst = y + o * out_row + column;
      const int8_t* src = x + o * row;
      if (xq == yq) {
        std::memcpy(dst, src, static_cast<size_t>(row));
      } else {
        for (int64_t i = 0; i < row; ++i)
          dst[i] = quantize_value(dequantize_value(src[i], xq.scale, xq.zero_point), yq.scale, yq.zero_point);
      }
    }
    column += row;
  }
}

}  // namespace

void register_quantized_elementwise_kernels(KernelTable& table) {
  table.add_int8("mul", mul);
  table.add_int8("sigmoid", sigmoid);
  table.add_int8("hardswish", hardswish);
  table.add_int8("silu", silu);
  table.add_int8("hardsigmoid", hardsigmoid);
  table.add_int8("concat", concat);
}

}  // namespace mt::reference
