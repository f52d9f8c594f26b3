// The rules for 3-D windows (rank-5 inputs, N x C x D x H x W): Conv, ConvTranspose, MaxPool and
// AveragePool become mt's 2-D ops over every depth plane (the planes folded into the batch), combined
// along the depth with slices, pads, adds or maxima, so that every backend runs them.
#include <limits>

#include "lib/import/constant_values.h"
#include "lib/import/conv_window.h"

namespace mt::onnx_import {
namespace {

using Ints = std::vector<int64_t>;

// A 3-D window attribute (3 values, each in [low, kMaxWindow]).
Ints triple_attr(const OnnxNode& node, const char* name, int64_t fallback, int64_t low) {
  auto values = node.attr_ints(name, {fallback, fallback, fallback});
  if (values.size() != 3) node.invalid("{} has {} values for a 3-D window", name, values.size());
  check_range(node, name, values, low, kMaxWindow);
  return values;
}

// The pads attribute of a 3-D window (6 values: the begins, then the ends).
Ints pads_attr_3d(const OnnxNode& node) {
  auto pads = node.attr_ints("pads", Ints(6, 0));
  if (pads.size() != 6) node.invalid("pads has {} values for a 3-D window", pads.size());
  check_range(node, "pads", pads, 0, kMaxWindow);
  return pads;
}

// The pads of a conv or pool window, auto_pad resolved on the input sizes.
Ints pads_3d(const OnnxNode& node, const Shape& x, const Ints& kernel, const Ints& strides, const Ints& dilations) {
  Ints pads = pads_attr_3d(node);
  if (const std::string mode = node.attr_string("auto_pad", "NOTSET"); mode != "NOTSET")
    for (size_t a = 0; a < 3; ++a) {
      const auto axis = axis_auto_pads(node, mode, x[2 + a], kernel[a], strides[a], dilations[a]);
      pads[a] = axis[0], pads[a + 3] = axis[1];
    }
  return pads;
}

// The kernel of a conv node's rank-5 weight.
Ints kernel_3d(ImportContext& ctx, const OnnxNode& node) {
  const TensorInfo& weight = ctx.input_info(node, 1);
  if (weight.shape.size() != 5)
    node.invalid("weight '{}' has shape {}, but the input has 3 spatial axes", node.input(1), shape_str(weight.shape));
  const Ints kernel(weight.shape.begin() + 2, weight.shape.end());
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != kernel)
    node.invalid("kernel_shape does not match the weight's shape {}", shape_str(weight.shape));
  check_range(node, "kernel size", kernel, 1, kMaxWindow);
  return kernel;
}

// A fresh tensor name for a step of the node's lowering.
std::string step_name(ImportContext& ctx, const OnnxNode& node, const char* what) {
  return ctx.fresh_name(node.output(0) + "/" + what);
}

// The node's input 0 (N x C x D x H x W) as 2-D planes (N*D' x C x H x W), its depth padded first by
// `begin` and `end` planes of `value` (D' = D + begin + end).
std::string depth_planes(ImportContext& ctx, const OnnxNode& node, const Shape& x, int64_t begin, int64_t end,
                         double value) {
  std::string planes = ctx.input(node, 0);
  if (begin != 0 || end != 0)
    planes = ctx.emit1(node, "pad", {planes},
                       {{"pads", Ints{0, 0, begin, 0, 0, 0, 0, end, 0, 0}}, {"mode", std::string("constant")},
                        {"value", value}},
                       step_name(ctx, node, "padded"));
  planes = ctx.emit1(node, "transpose", {planes}, {{"perm", Ints{0, 2, 1, 3, 4}}}, step_name(ctx, node, "depth_major"));
  return ctx.emit1(node, "reshape", {planes}, {{"shape", Ints{x[0] * (x[2] + begin + end), x[1], x[3], x[4]}}},
                   step_name(ctx, node, "planes"));
}

// The 2-D weight of kernel depth kd: W[:, :, kd] (folded when W is constant).
std::string weight_plane(ImportContext& ctx, const OnnxNode& node, int64_t kd) {
  const Shape& w = ctx.input_info(node, 1).shape;
  const std::string plane = ctx.emit1(node, "slice", {ctx.input(node, 1)},
                                      {{"starts", Ints{kd}}, {"ends", Ints{kd + 1}}, {"axes", Ints{2}}},
                                      step_name(ctx, node, "weight"));
  return ctx.emit1(node, "reshape", {plane}, {{"shape", Ints{w[0], w[1], w[3], w[4]}}}, step_name(ctx, node, "weight"));
}

// The result in depth-major order (N x D x C x H x W) as the node's output (N x C x D x H x W).
void emit_depth_major(ImportContext& ctx, const OnnxNode& node, const std::string& result) {
  ctx.emit1(node, "transpose", {result}, {{"perm", Ints{0, 2, 1, 3, 4}}}, node.output(0));
}

}  // namespace

// Conv on a rank-5 input (3-D windows, N x C x D x H x W) as 2-D convolutions of every depth plane,
// one per kernel depth kd, summed: with the depth padded by zeros and the planes folded into the
// batch, y[:, :, d] = bias + sum over kd of conv2d(x[:, :, d * stride + kd * dilation], W[:, :, kd]).
// Every backend runs it; each conv2d covers every plane, so a depth stride above 1 costs the
// planes it skips.
void conv_3d(ImportContext& ctx, const OnnxNode& node, const TensorInfo& x) {
  const Ints kernel = kernel_3d(ctx, node);
  const Ints strides = triple_attr(node, "strides", 1, 1), dilations = triple_attr(node, "dilations", 1, 1);
  const Ints pads = pads_3d(node, x.shape, kernel, strides, dilations);
  const int64_t n = x.shape[0], depth = x.shape[2] + pads[0] + pads[3];
  const int64_t reach = (kernel[0] - 1) * dilations[0] + 1;
  if (depth < reach) node.invalid("the kernel's depth {} is larger than the padded input's {}", reach, depth);
  const int64_t out_depth = (depth - reach) / strides[0] + 1;
  auto fresh = [&](const char* what) { return step_name(ctx, node, what); };

  const std::string planes = depth_planes(ctx, node, x.shape, pads[0], pads[3], 0.0);
  const Attributes conv_attrs{{"strides", Ints{strides[1], strides[2]}},
                              {"pads", Ints{pads[1], pads[2], pads[4], pads[5]}},
                              {"dilations", Ints{dilations[1], dilations[2]}},
                              {"group", node.attr_int("group", 1)}};
  std::string sum;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    std::vector<std::string> inputs{planes, weight_plane(ctx, node, kd)};
    if (kd == 0 && node.has_input(2)) inputs.push_back(ctx.input(node, 2));
    const std::string z = ctx.emit1(node, "conv2d", inputs, conv_attrs, fresh("tap"));
    const Shape& z_shape = ctx.graph().tensor(z).shape;
    std::string tap = ctx.emit1(node, "reshape", {z}, {{"shape", Ints{n, depth, z_shape[1], z_shape[2], z_shape[3]}}},
                                fresh("tap"));
    const int64_t first = kd * dilations[0];
    tap = ctx.emit1(node, "slice", {tap},
                    {{"starts", Ints{first}},
                     {"ends", Ints{first + (out_depth - 1) * strides[0] + 1}},
                     {"axes", Ints{1}},
                     {"steps", Ints{strides[0]}}},
                    fresh("tap"));
    sum = sum.empty() ? tap : ctx.emit1(node, "add", {sum, tap}, {}, fresh("sum"));
  }
  emit_depth_major(ctx, node, sum);
}

// ConvTranspose on a rank-5 input (3-D windows): a 2-D transposed convolution of every depth plane
// (planes folded into the batch) per kernel depth kd, whose output plane i belongs at depth
// i * stride + kd * dilation - pad_begin: spread by the stride (zero planes between), shifted there
// (pad, or crop with negative pads), summed over kd; the bias is added once, at the end.
void conv_transpose_3d(ImportContext& ctx, const OnnxNode& node, const TensorInfo& x) {
  const Ints kernel = kernel_3d(ctx, node);
  const Ints strides = triple_attr(node, "strides", 1, 1), dilations = triple_attr(node, "dilations", 1, 1);
  Ints output_padding = triple_attr(node, "output_padding", 0, 0), pads = pads_attr_3d(node);
  transpose_pads(node, {x.shape[2], x.shape[3], x.shape[4]}, kernel, strides, dilations, output_shape_attr(node, 3),
                 pads, output_padding);
  const int64_t n = x.shape[0], in_depth = x.shape[2];
  const int64_t out_depth =
      strides[0] * (in_depth - 1) + output_padding[0] + (kernel[0] - 1) * dilations[0] + 1 - pads[0] - pads[3];
  if (out_depth < 1) node.invalid("the output depth would be {}", out_depth);
  auto fresh = [&](const char* what) { return step_name(ctx, node, what); };

  const std::string planes = depth_planes(ctx, node, x.shape, 0, 0, 0.0);
  const Attributes attrs{{"strides", Ints{strides[1], strides[2]}},
                         {"pads", Ints{pads[1], pads[2], pads[4], pads[5]}},
                         {"dilations", Ints{dilations[1], dilations[2]}},
                         {"group", node.attr_int("group", 1)},
                         {"output_padding", Ints{output_padding[1], output_padding[2]}}};
  std::string sum;
  Shape plane_out;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    const std::string z = ctx.emit1(node, "conv_transpose2d", {planes, weight_plane(ctx, node, kd)}, attrs, fresh("tap"));
    plane_out = ctx.graph().tensor(z).shape;  // N*D x O x H' x W'
    const int64_t plane = plane_out[1] * plane_out[2] * plane_out[3];
    std::string tap = ctx.emit1(node, "reshape", {z}, {{"shape", Ints{n, in_depth, 1, plane}}}, fresh("tap"));
    if (strides[0] > 1)
      tap = ctx.emit1(node, "pad", {tap},
                      {{"pads", Ints{0, 0, 0, 0, 0, 0, strides[0] - 1, 0}}, {"mode", std::string("constant")},
                       {"value", 0.0}},
                      fresh("spread"));
    tap = ctx.emit1(node, "reshape", {tap}, {{"shape", Ints{n, in_depth * strides[0], plane}}}, fresh("spread"));
    const int64_t shift = kd * dilations[0] - pads[0];
    tap = ctx.emit1(node, "pad", {tap},
                    {{"pads", Ints{0, shift, 0, 0, out_depth - in_depth * strides[0] - shift, 0}},
                     {"mode", std::string("constant")},
                     {"value", 0.0}},
                    fresh("placed"));
    sum = sum.empty() ? tap : ctx.emit1(node, "add", {sum, tap}, {}, fresh("taps"));
  }
  sum = ctx.emit1(node, "reshape", {sum}, {{"shape", Ints{n, out_depth, plane_out[1], plane_out[2], plane_out[3]}}},
                  fresh("taps"));
  if (node.has_input(2)) {
    const std::string bias = ctx.emit1(node, "reshape", {ctx.input(node, 2)},
                                       {{"shape", Ints{plane_out[1], 1, 1}}}, fresh("bias"));
    sum = ctx.emit1(node, "add", {sum, bias}, {}, fresh("biased"));
  }
  emit_depth_major(ctx, node, sum);
}

// MaxPool and AveragePool on a rank-5 input (3-D windows) as the 2-D pool of every depth plane
// (planes folded into the batch), then the maximum or the sum of the planes each depth window
// covers, sliced by the depth stride. The average's depth divisor (the planes counted, which differ
// at the borders) multiplies the sum; the 2-D pool divides by the rest of the window's count.
void pool_3d(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op, const TensorInfo& x) {
  const bool max = mt_op == "max_pool2d";
  if (!node.has_attr("kernel_shape")) node.invalid("attribute 'kernel_shape' is required");
  const Ints kernel = triple_attr(node, "kernel_shape", 1, 1), strides = triple_attr(node, "strides", 1, 1);
  const Ints dilations = triple_attr(node, "dilations", 1, 1);
  if (!max && dilations != Ints{1, 1, 1}) node.unsupported("dilated average pooling");
  if (max && node.attr_int("storage_order", 0) != 0)
    node.unsupported("storage_order {} (column-major indices)", node.attr_int("storage_order", 0));
  const Ints pads = pads_3d(node, x.shape, kernel, strides, dilations);
  const int64_t ceil_mode = node.attr_int("ceil_mode", 0);
  // Depth windows as the 2-D pools count them (PyTorch's rule): rounded up with ceil_mode, but the
  // last one starts inside the input or its leading padding.
  const int64_t in_depth = x.shape[2], reach = (kernel[0] - 1) * dilations[0] + 1;
  const int64_t span = in_depth + pads[0] + pads[3] - reach;
  if (span < 0) node.invalid("the window's depth {} is larger than the padded input's {}", reach, span + reach);
  int64_t out_depth = (ceil_mode ? (span + strides[0] - 1) / strides[0] : span / strides[0]) + 1;
  if (ceil_mode && (out_depth - 1) * strides[0] >= in_depth + pads[0]) --out_depth;
  const int64_t past_end = std::max<int64_t>(0, (out_depth - 1) * strides[0] + reach - (in_depth + pads[0] + pads[3]));
  const int64_t n = x.shape[0], depth = in_depth + pads[0] + pads[3] + past_end;
  auto fresh = [&](const char* what) { return step_name(ctx, node, what); };

  // Padded planes never win a maximum (each window holds an input plane) and add nothing to a sum.
  const double padding = max ? -static_cast<double>(std::numeric_limits<float>::max()) : 0.0;
  const std::string planes = depth_planes(ctx, node, x.shape, pads[0], pads[3] + past_end, padding);
  Attributes attrs{{"kernel_shape", Ints{kernel[1], kernel[2]}},
                   {"strides", Ints{strides[1], strides[2]}},
                   {"pads", Ints{pads[1], pads[2], pads[4], pads[5]}},
                   {"ceil_mode", ceil_mode}};
  if (max) attrs["dilations"] = Ints{dilations[1], dilations[2]};
  else attrs["count_include_pad"] = node.attr_int("count_include_pad", 0);
  const std::string pooled = ctx.emit1(node, mt_op, {planes}, attrs, fresh("pooled"));
  const Shape& p_shape = ctx.graph().tensor(pooled).shape;
  const std::string by_depth = ctx.emit1(
      node, "reshape", {pooled}, {{"shape", Ints{n, depth, p_shape[1], p_shape[2], p_shape[3]}}}, fresh("pooled"));
  std::string acc;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    const int64_t first = kd * dilations[0];
    const std::string tap = ctx.emit1(node, "slice", {by_depth},
                                      {{"starts", Ints{first}},
                                       {"ends", Ints{first + (out_depth - 1) * strides[0] + 1}},
                                       {"axes", Ints{1}},
                                       {"steps", Ints{strides[0]}}},
                                      fresh("tap"));
    acc = acc.empty() ? tap : ctx.emit1(node, max ? "max" : "add", {acc, tap}, {}, fresh("taps"));
  }
  if (!max) {
    const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
    std::vector<double> scale;
    for (int64_t d = 0; d < out_depth; ++d) {
      int64_t count = 0;
      for (int64_t kd = 0; kd < kernel[0]; ++kd) {
        const int64_t i = d * strides[0] - pads[0] + kd;
        count += include_pad ? (i >= -pads[0] && i < in_depth + pads[3]) : (i >= 0 && i < in_depth);
      }
      scale.push_back(1.0 / static_cast<double>(count));
    }
    const std::string divisor =
        ctx.add_constant(make_constant(fresh("depth_divisor"), DType::f32, {1, out_depth, 1, 1, 1}, scale));
    acc = ctx.emit1(node, "mul", {acc, divisor}, {}, fresh("mean"));
  }
  emit_depth_major(ctx, node, acc);
}

}  // namespace mt::onnx_import
