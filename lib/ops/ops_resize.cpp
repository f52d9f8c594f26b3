// Op schemas of the resize family: resize (ONNX Resize: nearest, n-linear and cubic
// interpolation with its coordinate transforms) and pad (constant, reflect, edge; negative pads crop).
#include <cmath>

#include "lib/ops/registry.h"
#include "lib/ops/resize_coords.h"

namespace mt {
namespace {

// Whether the padding value converts to `dtype` exactly (floats: any value).
bool representable(double value, DType dtype) {
  auto in_range = [&](double low, double high) { return value == std::trunc(value) && value >= low && value <= high; };
  switch (dtype) {
    case DType::f32:
    case DType::f16:
      return true;
    case DType::i8:
      return in_range(-128, 127);
    case DType::u8:
      return in_range(0, 255);
    case DType::i32:
      return in_range(-2147483648.0, 2147483647.0);
    case DType::i64:
      return in_range(-9223372036854775808.0, 9223372036854774784.0);  // largest double below 2^63
    case DType::boolean:
      return value == 0 || value == 1;
  }
  return false;
}

std::vector<TensorType> infer_resize(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  try {
    return {{x.dtype, read_resize(context.node(), x.shape).sizes}};
  } catch (const Error& error) {
    context.fail_message(error.what());
  }
}

std::vector<TensorType> infer_pad(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const auto& pads = context.attr_ints("pads");
  const size_t rank = x.shape.size();
  if (pads.size() != 2 * rank)
    context.fail("attribute 'pads' has {} values, expected 2 * rank = {}", pads.size(), 2 * rank);
  const std::string& mode = context.attr_string("mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    context.fail("attribute 'mode' = \"{}\" must be one of constant, reflect, edge", mode);
  const double value = context.attr_float("value");
  if (!representable(value, x.dtype))
    context.fail("attribute 'value' = {} cannot be stored in the input's dtype {}", value, dtype_name(x.dtype));

  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t begin = pads[i], end = pads[i + rank], dim = x.shape[i];
    if (begin < -kMaxElements || begin > kMaxElements || end < -kMaxElements || end > kMaxElements)
      context.fail("attribute 'pads' = [{}] holds a value beyond 2^40", fmt::join(pads, ","));
    out[i] = dim + begin + end;
    if (out[i] < 0)
      context.fail("pads {} and {} on axis {} of size {} leave a negative size {}", begin, end, i, dim, out[i]);
    // Reflection mirrors around the edge element, so it can add at most dim - 1 elements per side.
    if (mode == "reflect" && (begin > dim - 1 || end > dim - 1))
      context.fail("reflect pads {} and {} on axis {} must be smaller than its size {}", begin, end, i, dim);
    if (mode == "edge" && dim == 0 && out[i] > 0) context.fail("cannot edge-pad axis {} of size 0", i);
  }
  return {{x.dtype, out}};
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  using Floats = std::vector<double>;
  registry.add({"resize",
                "Resize X to 'sizes' by nearest, n-linear or cubic interpolation (ONNX Resize)",
                {"X"},
                false,
                1,
                {{"sizes", AttrType::integers, std::nullopt},
                 {"scales", AttrType::reals, Attribute{Floats{}}},
                 {"mode", AttrType::string, Attribute{std::string("nearest")}},
                 {"coordinate_transformation_mode", AttrType::string, Attribute{std::string("half_pixel")}},
                 {"nearest_mode", AttrType::string, Attribute{std::string("round_prefer_floor")}},
                 {"cubic_coeff_a", AttrType::real, Attribute{-0.75}},
                 {"exclude_outside", AttrType::integer, Attribute{int64_t{0}}}},
                infer_resize});
  registry.add({"pad",
                "Pad (or, with negative pads, crop) every axis: constant value, reflection or edge repetition",
                {"X"},
                false,
                1,
                {{"pads", AttrType::integers, std::nullopt},
                 {"mode", AttrType::string, Attribute{std::string("constant")}},
                 {"value", AttrType::real, Attribute{0.0}}},
                infer_pad});
}

}  // namespace mt
