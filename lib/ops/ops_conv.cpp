// Op schemas of the conv family: 2-D convolution and transposed convolution on NCHW tensors,
// with groups (depthwise included), dilations, asymmetric pads and a fused output clamp.
#include <limits>

#include "lib/ops/conv_geometry.h"
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

constexpr double kFloatMax = std::numeric_limits<float>::max();

Window2d checked_conv_window(const InferContext& context) {
  try {
    return conv_window(context.node(), context.input(1).shape);
  } catch (const Error& error) {
    context.fail_message(error.what());
  }
}

void check_activation_range(const InferContext& context) {
  const double act_min = context.attr_float("act_min");
  const double act_max = context.attr_float("act_max");
  if (!(act_min <= act_max)) context.fail("attribute 'act_min' ({}) is greater than 'act_max' ({})", act_min, act_max);
}

int64_t checked_group(const InferContext& context, int64_t in_channels) {
  const int64_t group = context.attr_int("group");
  if (group < 1) context.fail("attribute 'group' must be >= 1, got {}", group);
  if (in_channels < 1) context.fail("input '{}' has no channels", context.node().inputs[0]);
  if (in_channels % group != 0) context.fail("group {} does not divide the {} input channels", group, in_channels);
  return group;
}

void check_bias(const InferContext& context, int64_t out_channels) {
  if (!context.has_input(2)) return;
  require_matching_dtype(context, 2, 0);
  const Shape& bias = context.input(2).shape;
  if (bias != Shape{out_channels})
    context.fail("bias '{}' has shape {}, expected {}", context.node().inputs[2], shape_str(bias), out_channels);
}

// One spatial output dimension; fails if it is empty or too large.
int64_t output_length(const InferContext& context, const Window2d& window, int axis, int64_t in, bool transposed) {
  const auto length = transposed ? transposed_output_length(window, axis, in) : window_output_length(window, axis, in);
  const char* name = axis == 0 ? "height" : "width";
  if (!length || *length > kMaxElements) context.fail("output {} is too large", name);
  if (*length < 1)
    context.fail("output {} would be {}: input {} {}, kernel extent {}, stride {}, pads {}+{}", name, *length, name, in,
                 window.extent(axis), window.stride[axis], window.pad_begin[axis], window.pad_end[axis]);
  return *length;
}

std::vector<TensorType> infer_conv2d(const InferContext& context) {
  require_rank(context, 0, 4, 4);
  require_rank(context, 1, 4, 4);
  require_matching_dtype(context, 1, 0);
  check_activation_range(context);
  const TensorInfo& x = context.input(0);
  const Shape& w = context.input(1).shape;
  const int64_t group = checked_group(context, x.shape[1]);
  if (w[1] != x.shape[1] / group)
    context.fail("weight '{}' {} takes {} channels per group, but the input has {} channels in {} groups",
                 context.node().inputs[1], shape_str(w), w[1], x.shape[1], group);
  if (w[0] < 1 || w[0] % group != 0)
    context.fail("weight '{}' {} has {} output channels, which is not a positive multiple of group {}",
                 context.node().inputs[1], shape_str(w), w[0], group);
  check_bias(context, w[0]);
  const Window2d window = checked_conv_window(context);
  return {{x.dtype,
           {x.shape[0], w[0], output_length(context, window, 0, x.shape[2], false),
            output_length(context, window, 1, x.shape[3], false)}}};
}

std::vector<TensorType> infer_conv_transpose2d(const InferContext& context) {
  require_rank(context, 0, 4, 4);
  require_rank(context, 1, 4, 4);
  require_matching_dtype(context, 1, 0);
  check_activation_range(context);
  const TensorInfo& x = context.input(0);
  const Shape& w = context.input(1).shape;
  const int64_t group = checked_group(context, x.shape[1]);
  if (w[0] != x.shape[1])
    context.fail("weight '{}' {} is for {} input channels, but the input has {}", context.node().inputs[1],
                 shape_str(w), w[0], x.shape[1]);
  if (w[1] < 1 || w[1] > kMaxElements / group)
    context.fail("weight '{}' {} must have between 1 and 2^40/group output channels per group",
                 context.node().inputs[1], shape_str(w));
  const int64_t out_channels = w[1] * group;
  check_bias(context, out_channels);
  const Window2d window = checked_conv_window(context);
  return {{x.dtype,
           {x.shape[0], out_channels, output_length(context, window, 0, x.shape[2], true),
            output_length(context, window, 1, x.shape[3], true)}}};
}

using Ints = std::vector<int64_t>;

std::vector<AttrSpec> conv_attrs() {
  return {{"strides", AttrType::integers, Attribute{Ints{1, 1}}},
          {"pads", AttrType::integers, Attribute{Ints{0, 0, 0, 0}}},
          {"dilations", AttrType::integers, Attribute{Ints{1, 1}}},
          {"group", AttrType::integer, Attribute{int64_t{1}}},
          {"act_min", AttrType::real, Attribute{-kFloatMax}},
          {"act_max", AttrType::real, Attribute{kFloatMax}}};
}

}  // namespace

void register_conv_ops(OpRegistry& registry) {
  registry.add({"conv2d",
                "2-D convolution of X[N,C,H,W] with W[M,C/group,kH,kW] plus B[M], clamped to [act_min, act_max]",
                {"X", "W", "B?"},
                false,
                1,
                conv_attrs(),
                infer_conv2d});
  std::vector<AttrSpec> transpose_attrs = conv_attrs();
  transpose_attrs.push_back({"output_padding", AttrType::integers, Attribute{Ints{0, 0}}});
  registry.add(
      {"conv_transpose2d",
       "2-D transposed convolution of X[N,C,H,W] with W[C,M/group,kH,kW] plus B[M], clamped to [act_min, act_max]",
       {"X", "W", "B?"},
       false,
       1,
       std::move(transpose_attrs),
       infer_conv_transpose2d});
}

}  // namespace mt
