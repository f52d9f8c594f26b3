// Reference kernels of the resize family. resize interpolates one axis at a time (nearest,
// n-linear and cubic are all separable), in double; pad maps every output element to its
// source element or the constant, for any dtype.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "lib/core/float16.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/saturating_cast.h"
#include "lib/ops/registry.h"
#include "lib/ops/resize_coords.h"

namespace mt::reference {
namespace {

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t result = 1;
  for (size_t i = begin; i < end; ++i) result *= shape[i];
  return result;
}

void resize(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  require_dtype(node, *in[0].info, DType::f32);
  const Shape& input_shape = in[0].info->shape;
  const ResizeParams params = read_resize(node, input_shape);
  Shape shape = input_shape;
  const float* x = in[0].as<float>();
  std::vector<double> current(x, x + numel(shape));
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (!params.resizes_axis(axis, input_shape[axis])) continue;
    const int64_t in_length = shape[axis];
    const int64_t out_length = params.sizes[axis];
    std::vector<ResizeTaps> taps(static_cast<size_t>(out_length));
    for (int64_t j = 0; j < out_length; ++j) taps[j] = resize_taps(params, axis, in_length, j);
    const int64_t outer = product(shape, 0, axis);
    const int64_t inner = product(shape, axis + 1, shape.size());
    std::vector<double> next(static_cast<size_t>(outer * out_length * inner));
    // next[o][j][i] = sum over taps t of weight(j, t) * current[o][index(j, t)][i]
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < out_length; ++j)
        for (int64_t i = 0; i < inner; ++i) {
          double sum = 0;
          for (int t = 0; t < taps[j].count; ++t)
            sum += taps[j].weight[t] * current[(o * in_length + taps[j].index[t]) * inner + i];
          next[(o * out_length + j) * inner + i] = sum;
        }
    shape[axis] = out_length;
    current.swap(next);
  }
  float* y = out[0].as<float>();
  for (size_t i = 0; i < current.size(); ++i) y[i] = static_cast<float>(current[i]);
}

// The bytes of the padding value in `dtype` (shape inference checked that it fits).
std::array<std::byte, 8> value_bytes(double value, DType dtype) {
  std::array<std::byte, 8> bytes{};
  auto store = [&](auto typed) { std::memcpy(bytes.data(), &typed, sizeof(typed)); };
  switch (dtype) {
    case DType::f32:
      store(static_cast<float>(value));
      break;
    case DType::f16:
      store(float_to_half(static_cast<float>(value)));
      break;
    case DType::i8: store(saturating_cast<int8_t>(value)); break;
    case DType::u8: store(saturating_cast<uint8_t>(value)); break;
    case DType::i32: store(saturating_cast<int32_t>(value)); break;
    case DType::i64: store(saturating_cast<int64_t>(value)); break;
    case DType::boolean:
      store(static_cast<uint8_t>(value != 0));
      break;
  }
  return bytes;
}

// Input index that output index `o` of one axis reads, or -1 for the constant.
int64_t pad_source(const std::string& mode, int64_t o, int64_t begin, int64_t dim) {
  const int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  if (mode == "edge") return std::clamp<int64_t>(i, 0, dim - 1);
  if (mode == "reflect") return i < 0 ? -i : 2 * (dim - 1) - i;
  return -1;
}

void pad(const Node& node, std::span<const ConstView> in, std::span<const MutView> out) {
  const Shape& xs = in[0].info->shape;
  const Shape& ys = out[0].info->shape;
  const auto& pads = attr_ints(node, "pads");
  const std::string& mode = attr_string(node, "mode");
  const size_t rank = xs.size();
  const size_t elem = dtype_size(in[0].info->dtype);
  const std::array<std::byte, 8> constant = value_bytes(attr_float(node, "value"), in[0].info->dtype);

  // Per axis, the source index of every output index, weighted by the input stride (-1: constant).
  std::vector<std::vector<int64_t>> sources(rank);
  int64_t stride = 1;
  for (size_t axis = rank; axis-- > 0;) {
    for (int64_t o = 0; o < ys[axis]; ++o) {
      const int64_t source = pad_source(mode, o, pads[axis], xs[axis]);
      sources[axis].push_back(source < 0 ? -1 : source * stride);
    }
    stride *= xs[axis];
  }
  const auto* src = static_cast<const std::byte*>(in[0].data);
  auto* dst = static_cast<std::byte*>(out[0].data);
  const int64_t count = numel(ys);
  for (int64_t e = 0; e < count; ++e) {
    int64_t offset = 0;
    int64_t rest = e;
    for (size_t axis = rank; axis-- > 0 && offset >= 0;) {
      const int64_t source = sources[axis][rest % ys[axis]];
      rest /= ys[axis];
      offset = source < 0 ? -1 : offset + source;
    }
    std::memcpy(dst + e * elem, offset < 0 ? constant.data() : src + offset * elem, elem);
  }
}

}  // namespace

void register_resize_kernels(KernelTable& table) {
  table.add("resize", resize);
  table.add("pad", pad);
}

}  // namespace mt::reference
