// Op schemas of the logic family: comparisons (bool results), boolean algebra on bool tensors,
// float classification (is_nan, is_inf) and selection (where), all with numpy broadcasting.
#include "lib/ops/broadcast.h"
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

Shape broadcast_inputs(const InferContext& context) {
  Shape out;
  for (size_t i = 0; i < context.num_inputs(); ++i) {
    auto shape = broadcast_shapes(out, context.input(i).shape);
    if (!shape)
      context.fail("input '{}' ({}) does not broadcast with the other inputs ({})", context.node().inputs[i],
                   shape_str(context.input(i).shape), shape_str(out));
    out = *shape;
  }
  return out;
}

void require_dtype(const InferContext& context, size_t index, DType dtype) {
  if (context.input(index).dtype != dtype)
    context.fail("input '{}' is {}, expected {}", context.node().inputs[index], dtype_name(context.input(index).dtype),
                 dtype_name(dtype));
}

// A op B, operands of one dtype, a bool result.
std::vector<TensorType> infer_compare(const InferContext& context) {
  require_same_dtype(context, 1, 0);
  return {TensorType{DType::boolean, broadcast_inputs(context)}};
}

std::vector<TensorType> infer_boolean(const InferContext& context) {
  for (size_t i = 0; i < context.num_inputs(); ++i) require_dtype(context, i, DType::boolean);
  return {TensorType{DType::boolean, broadcast_inputs(context)}};
}

std::vector<TensorType> infer_classify(const InferContext& context) {
  if (!is_floating(context.input(0).dtype))
    context.fail("input '{}' is {}; it must be a float tensor", context.node().inputs[0],
                 dtype_name(context.input(0).dtype));
  return {TensorType{DType::boolean, context.input(0).shape}};
}

std::vector<TensorType> infer_where(const InferContext& context) {
  require_dtype(context, 0, DType::boolean);
  require_same_dtype(context, 2, 1);
  return {TensorType{context.input(1).dtype, broadcast_inputs(context)}};
}

OpSchema compare(std::string name, std::string summary) {
  return OpSchema{std::move(name), std::move(summary), {"A", "B"}, false, 1, {}, infer_compare};
}

OpSchema boolean(std::string name, std::string summary) {
  return OpSchema{std::move(name), std::move(summary), {"A", "B"}, false, 1, {}, infer_boolean};
}

}  // namespace

void register_logic_ops(OpRegistry& registry) {
  // NaN compares unequal and unordered (IEEE 754): every comparison with it is false.
  registry.add(compare("equal", "A == B (broadcast; bool)"));
  registry.add(compare("less", "A < B (broadcast; bool)"));
  registry.add(compare("less_or_equal", "A <= B (broadcast; bool)"));
  registry.add(compare("greater", "A > B (broadcast; bool)"));
  registry.add(compare("greater_or_equal", "A >= B (broadcast; bool)"));
  registry.add(boolean("logical_and", "A and B (broadcast; bool tensors)"));
  registry.add(boolean("logical_or", "A or B (broadcast; bool tensors)"));
  registry.add(boolean("logical_xor", "A xor B (broadcast; bool tensors)"));
  registry.add(OpSchema{"logical_not", "not X (bool tensor)", {"X"}, false, 1, {}, infer_boolean});
  registry.add(OpSchema{"is_nan", "whether x is NaN (bool)", {"X"}, false, 1, {}, infer_classify});
  registry.add(OpSchema{"is_inf",
                        "whether x is +infinity (if detect_positive) or -infinity (if detect_negative) (bool)",
                        {"X"},
                        false,
                        1,
                        {{"detect_positive", AttrType::integer, Attribute{int64_t{1}}},
                         {"detect_negative", AttrType::integer, Attribute{int64_t{1}}}},
                        infer_classify});
  registry.add(
      OpSchema{"where", "X where condition else Y (broadcast)", {"condition", "X", "Y"}, false, 1, {}, infer_where});
}

}  // namespace mt
