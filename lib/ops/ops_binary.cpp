// Op schemas of the binary family: element-wise arithmetic with numpy broadcasting.
#include <limits>

#include "lib/ops/broadcast.h"
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

std::vector<TensorType> infer_binary(const InferContext& context) {
  require_same_dtype(context, 1, 0);
  const TensorInfo& a = context.input(0);
  const TensorInfo& b = context.input(1);
  auto shape = broadcast_shapes(a.shape, b.shape);
  if (!shape)
    context.fail("inputs '{}' ({}) and '{}' ({}) do not broadcast", context.node().inputs[0], shape_str(a.shape),
                 context.node().inputs[1], shape_str(b.shape));
  return {TensorType{a.dtype, *shape}};
}

// add with the clamp mt-fuse folds into it.
std::vector<TensorType> infer_add(const InferContext& context) {
  const double act_min = context.attr_float("act_min");
  const double act_max = context.attr_float("act_max");
  if (act_min > act_max) context.fail("attribute 'act_min' ({}) is greater than 'act_max' ({})", act_min, act_max);
  return infer_binary(context);
}

// mod: fmod 0 is the floored remainder (sign of B, as Python's %), which ONNX defines for integers
// only; fmod 1 the truncated one (sign of A, as C's fmod).
std::vector<TensorType> infer_mod(const InferContext& context) {
  const bool fmod = checked_flag(context, "fmod");
  if (!fmod && is_floating(context.input(0).dtype))
    context.fail("attribute 'fmod' must be 1 for {} operands (ONNX Mod)", dtype_name(context.input(0).dtype));
  return infer_binary(context);
}

// bit_shift: ONNX defines it on unsigned integers, of which mt has uint8.
std::vector<TensorType> infer_bit_shift(const InferContext& context) {
  const std::string& direction = context.attr_string("direction");
  if (direction != "left" && direction != "right")
    context.fail("attribute 'direction' must be \"left\" or \"right\", got \"{}\"", direction);
  if (context.input(0).dtype != DType::u8)
    context.fail("input '{}' is {}; bit_shift takes uint8", context.node().inputs[0],
                 dtype_name(context.input(0).dtype));
  return infer_binary(context);
}

OpSchema binary(std::string name, std::string summary, std::vector<AttrSpec> attrs = {}, ShapeFn infer = infer_binary) {
  return OpSchema{std::move(name), std::move(summary), {"A", "B"}, false, 1, std::move(attrs), infer};
}

}  // namespace

void register_binary_ops(OpRegistry& registry) {
  registry.add(OpSchema{"add",
                        "A + B (broadcast), then clamped to [act_min, act_max]",
                        {"A", "B"},
                        false,
                        1,
                        {{"act_min", AttrType::real, Attribute{-kFloatMax}}, {"act_max", AttrType::real, Attribute{kFloatMax}}},
                        infer_add});
  registry.add(binary("sub", "A - B (broadcast)"));
  registry.add(binary("mul", "A * B (broadcast)"));
  registry.add(binary("div", "A / B (broadcast; integers truncate toward zero)"));
  registry.add(binary("pow", "A ^ B (broadcast)"));
  registry.add(binary("max", "element-wise maximum (broadcast)"));
  registry.add(binary("min", "element-wise minimum (broadcast)"));
  registry.add(binary("mod", "remainder of A / B (broadcast): sign of B (fmod 0, integers) or of A (fmod 1)",
                      {{"fmod", AttrType::integer, Attribute{int64_t{0}}}}, infer_mod));
  registry.add(binary("bit_shift", "A << B or A >> B (broadcast; uint8, bits shifted out are lost)",
                      {{"direction", AttrType::string, std::nullopt}}, infer_bit_shift));
}

}  // namespace mt
