// Rules for data-movement ops: Reshape, Flatten, Transpose, Concat, Split, Squeeze, Unsqueeze,
// Slice, Gather, Expand and Pad. Operands ONNX passes as tensors (shapes, axes, sizes, pads)
// must be constant by now and become the mt op's attributes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

// ONNX Reshape's target: 0 copies the input dimension (unless allowzero), -1 is inferred.
Shape reshape_target(const OnnxNode& node, const Shape& input, std::vector<int64_t> target, bool allow_zero) {
  int infer_at = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allow_zero) {
      if (i >= input.size()) node.invalid("shape entry {} is 0 but the input has rank {}", i, input.size());
      target[i] = input[i];
    }
    if (target[i] == -1) {
      if (infer_at >= 0) node.invalid("shape has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (target[i] < 0) node.invalid("shape entry {} is {}", i, target[i]);
    if (!checked_numel({known, target[i]})) node.invalid("shape {} is too large", shape_str(target));
    known *= target[i];
  }
  const int64_t count = numel(input);
  if (infer_at >= 0) {
    if (known == 0 || count % known != 0)
      node.invalid("cannot reshape {} to {}: the -1 dimension is not a whole number", shape_str(input),
                   shape_str(target));
    target[static_cast<size_t>(infer_at)] = count / known;
  } else if (known != count) {
    node.invalid("cannot reshape {} ({} elements) to {}", shape_str(input), count, shape_str(target));
  }
  return target;
}

void reshape(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const Shape input = ctx.input_info(node, 0).shape;
  const Shape shape = reshape_target(node, input, ctx.const_ints(node, 1, "shape"), node.attr_int("allowzero", 0) != 0);
  ctx.emit1(node, "reshape", {ctx.input(node, 0)}, {{"shape", shape}}, node.output(0));
}

void flatten(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const auto rank = static_cast<int64_t>(ctx.input_info(node, 0).shape.size());
  int64_t axis = node.attr_int("axis", 1);
  if (axis < -rank || axis > rank) node.invalid("axis {} is out of range for rank {}", axis, rank);
  if (axis < 0) axis += rank;
  ctx.emit1(node, "flatten", {ctx.input(node, 0)}, {{"axis", axis}}, node.output(0));
}

void transpose(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const size_t rank = ctx.input_info(node, 0).shape.size();
  std::vector<int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  perm = node.attr_ints("perm", perm);
  ctx.emit1(node, "transpose", {ctx.input(node, 0)}, {{"perm", perm}}, node.output(0));
}

void concat(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (!node.has_attr("axis")) node.invalid("attribute 'axis' is required");
  std::vector<std::string> inputs;
  for (size_t i = 0; i < node.num_inputs(); ++i) inputs.push_back(ctx.input(node, i));
  ctx.emit1(node, "concat", inputs, {{"axis", node.attr_int("axis", 0)}}, node.output(0));
}

// Split sizes: an attribute before opset 13, an optional input after; absent means equal
// parts (opset 18's num_outputs allows a smaller last part).
void split(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const Shape shape = ctx.input_info(node, 0).shape;
  const int64_t axis = node_axis(node, node.attr_int("axis", 0), shape.size());
  const int64_t dim = shape[static_cast<size_t>(axis)];
  const auto parts = static_cast<int64_t>(node.num_outputs());
  std::vector<int64_t> sizes = node.opset() < 13   ? node.attr_ints("split")
                               : node.has_input(1) ? ctx.const_ints(node, 1, "split")
                                                   : std::vector<int64_t>{};
  if (sizes.empty()) {
    if (node.has_attr("num_outputs") && node.attr_int("num_outputs", 0) != parts)
      node.invalid("num_outputs is {} but the node has {} outputs", node.attr_int("num_outputs", 0), parts);
    if (parts == 0) node.invalid("has no outputs");
    if (node.has_attr("num_outputs")) {
      const int64_t chunk = (dim + parts - 1) / parts;
      for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    } else {
      if (dim % parts != 0) node.invalid("cannot split dimension {} into {} equal parts", dim, parts);
      sizes.assign(static_cast<size_t>(parts), dim / parts);
    }
  }
  if (static_cast<int64_t>(sizes.size()) != parts)
    node.invalid("split has {} sizes but the node has {} outputs", sizes.size(), parts);
  std::vector<std::string> outputs;
  for (size_t i = 0; i < node.num_outputs(); ++i) outputs.push_back(node.output(i));
  ctx.emit(node, "split", {ctx.input(node, 0)}, {{"axis", axis}, {"split", sizes}}, outputs);
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13 on.
std::optional<std::vector<int64_t>> axes_operand(ImportContext& ctx, const OnnxNode& node) {
  if (node.opset() < 13) {
    if (!node.has_attr("axes")) return std::nullopt;
    return node.attr_ints("axes");
  }
  if (!node.has_input(1)) return std::nullopt;
  return ctx.const_ints(node, 1, "axes");
}

void squeeze(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const Shape shape = ctx.input_info(node, 0).shape;
  std::vector<int64_t> axes;
  if (auto given = axes_operand(ctx, node)) {
    for (int64_t axis : *given) {
      const int64_t a = node_axis(node, axis, shape.size());
      if (shape[static_cast<size_t>(a)] != 1)
        node.invalid("cannot squeeze axis {} of shape {}", axis, shape_str(shape));
      axes.push_back(a);
    }
  } else {
    for (size_t i = 0; i < shape.size(); ++i)
      if (shape[i] == 1) axes.push_back(static_cast<int64_t>(i));
  }
  ctx.emit1(node, "squeeze", {ctx.input(node, 0)}, {{"axes", axes}}, node.output(0));
}

void unsqueeze(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  auto axes = axes_operand(ctx, node);
  if (!axes) node.invalid("axes are required");
  ctx.emit1(node, "unsqueeze", {ctx.input(node, 0)}, {{"axes", *axes}}, node.output(0));
}

// Slice parameters: attributes in opset 9 (no steps), inputs from opset 10.
void slice(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  std::vector<int64_t> starts, ends, axes, steps;
  if (node.opset() < 10) {
    starts = node.attr_ints("starts");
    ends = node.attr_ints("ends");
    axes = node.attr_ints("axes");
  } else {
    ctx.require_known(node, {{1, "starts"}, {2, "ends"}, {3, "axes"}, {4, "steps"}});
    starts = ctx.const_ints(node, 1, "starts");
    ends = ctx.const_ints(node, 2, "ends");
    if (node.has_input(3)) axes = ctx.const_ints(node, 3, "axes");
    if (node.has_input(4)) steps = ctx.const_ints(node, 4, "steps");
  }
  Attributes attrs{{"starts", starts}, {"ends", ends}};
  if (!axes.empty()) attrs["axes"] = axes;
  if (!steps.empty()) attrs["steps"] = steps;
  ctx.emit1(node, "slice", {ctx.input(node, 0)}, attrs, node.output(0));
}

void gather(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "gather", {ctx.input(node, 0), ctx.input(node, 1)}, {{"axis", node.attr_int("axis", 0)}},
            node.output(0));
}

void expand(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "expand", {ctx.input(node, 0)}, {{"shape", ctx.const_ints(node, 1, "shape")}}, node.output(0));
}

// Pad: attributes before opset 11; from 11 the pads and constant value are inputs, and from 18
// an optional axes input says which axes the pads are for.
void pad(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const size_t rank = ctx.input_info(node, 0).shape.size();
  const std::string mode = node.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") node.unsupported("mode '{}'", mode);
  std::vector<int64_t> pads;
  double value = 0.0;
  if (node.opset() < 11) {
    pads = node.attr_ints("pads");
    value = node.attr_float("value", 0.0);
  } else {
    ctx.require_known(node, {{1, "pads"}, {2, "constant_value"}, {3, "axes"}});
    pads = ctx.const_ints(node, 1, "pads");
    if (node.has_input(2)) {
      auto values = ctx.const_floats(node, 2, "constant_value");
      if (values.size() > 1) node.invalid("constant_value must be a scalar, got {} values", values.size());
      if (!values.empty()) value = values[0];
    }
    if (node.has_input(3)) {
      const auto axes = ctx.const_ints(node, 3, "axes");
      if (pads.size() != 2 * axes.size()) node.invalid("pads has {} values for {} axes", pads.size(), axes.size());
      std::vector<int64_t> full(2 * rank, 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        const auto a = static_cast<size_t>(node_axis(node, axes[i], rank));
        full[a] = pads[i];
        full[a + rank] = pads[i + axes.size()];
      }
      pads = std::move(full);
    }
  }
  if (pads.size() != 2 * rank)
    node.invalid("pads has {} values, the input's rank {} needs {}", pads.size(), rank, 2 * rank);
  // The model file's JSON holds no infinity; FLT_MAX pads the same for every finite input.
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  if (std::isnan(value)) node.unsupported("a NaN padding value");
  value = std::clamp(value, -kFloatMax, kFloatMax);
  ctx.emit1(node, "pad", {ctx.input(node, 0)}, {{"pads", pads}, {"mode", mode}, {"value", value}}, node.output(0));
}

}  // namespace

void add_shape_translators(TranslatorTable& table) {
  table.add("Reshape", reshape);
  table.add("Flatten", flatten);
  table.add("Transpose", transpose);
  table.add("Concat", concat);
  table.add("Split", split);
  table.add("Squeeze", squeeze);
  table.add("Unsqueeze", unsqueeze);
  table.add("Slice", slice);
  table.add("Gather", gather);
  table.add("Expand", expand);
  table.add("Pad", pad);
}

}  // namespace mt::onnx_import
