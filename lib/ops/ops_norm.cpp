// Op schemas of the norm family: batch_norm (inference form, per channel), layer_norm and lrn.
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

std::vector<TensorType> infer_batch_norm(const InferContext& context) {
  require_rank(context, 0, 2);
  const int64_t channels = context.input(0).shape[1];
  for (size_t i = 1; i <= 4; ++i) {
    const TensorInfo& param = context.input(i);
    if (param.shape != Shape{channels})
      context.fail("input '{}' must have shape {} (the channels of X), got {}", context.node().inputs[i], channels,
                   shape_str(param.shape));
    require_matching_dtype(context, i, 0);
  }
  return same_as_input0(context);
}

std::vector<TensorType> infer_layer_norm(const InferContext& context) {
  require_rank(context, 0, 1);
  const Shape& shape = context.input(0).shape;
  const int axis = checked_axis(context, "axis", context.attr_int("axis"), shape.size());
  const Shape normalized(shape.begin() + axis, shape.end());
  if (context.has_input(1)) {
    require_broadcasts_to(context, 1, normalized, "scale");
    require_matching_dtype(context, 1, 0);
  }
  if (context.has_input(2)) {
    require_broadcasts_to(context, 2, normalized, "bias");
    require_matching_dtype(context, 2, 0);
  }
  return same_as_input0(context);
}

std::vector<TensorType> infer_lrn(const InferContext& context) {
  require_rank(context, 0, 2);
  if (context.attr_int("size") < 1)
    context.fail("attribute 'size' must be at least 1, got {}", context.attr_int("size"));
  return same_as_input0(context);
}

}  // namespace

void register_norm_ops(OpRegistry& registry) {
  registry.add(OpSchema{"batch_norm",
                        "(x - mean) / sqrt(var + epsilon) * scale + bias, per channel (dim 1)",
                        {"X", "scale", "bias", "mean", "var"},
                        false,
                        1,
                        {{"epsilon", AttrType::real, Attribute{1e-5}}},
                        infer_batch_norm});
  registry.add(OpSchema{"layer_norm",
                        "normalises over dims [axis, rank), then * scale + bias",
                        {"X", "scale?", "bias?"},
                        false,
                        1,
                        {{"axis", AttrType::integer, Attribute{int64_t{-1}}}, {"epsilon", AttrType::real, Attribute{1e-5}}},
                        infer_layer_norm});
  registry.add(OpSchema{"lrn",
                        "x / (bias + alpha / size * sum of x^2 over 'size' neighbouring channels) ^ beta",
                        {"X"},
                        false,
                        1,
                        {{"size", AttrType::integer, std::nullopt},
                         {"alpha", AttrType::real, Attribute{1e-4}},
                         {"beta", AttrType::real, Attribute{0.75}},
                         {"bias", AttrType::real, Attribute{1.0}}},
                        infer_lrn});
}

}  // namespace mt
