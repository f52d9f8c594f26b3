// Rules for convolution and pooling: Conv, ConvTranspose, MaxPool and AveragePool with 1-D, 2-D or 3-D
// windows, and the global pools. ONNX auto_pad and output_shape become explicit pads, which is all the mt
// ops know.
//
// 1-D signals (rank-3 inputs, N x C x L) run as 2-D ones with H = 1, so that every backend's 2-D
// kernels serve them: the input and the weight get a unit axis at 2, each window attribute a
// leading entry that leaves H alone (kernel 1, stride 1, dilation 1, no padding, no output
// padding), and the output loses the axis again. ONNX's size, pads and auto_pad arithmetic is per
// axis, so the H axis maps 1 -> 1 and the L axis computes exactly what the 1-D operator does.
// 3-D windows (rank 5) become 2-D ones over the depth planes, combined along the depth (conv_3d,
// conv_transpose_3d, pool_3d).
#include <limits>

#include "lib/import/constant_values.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

// Window sizes, strides and dilations beyond this are no real network's, and bounding them keeps
// the pad arithmetic below far from overflow whatever a file says.
constexpr int64_t kMaxWindow = int64_t{1} << 20;

void check_range(const OnnxNode& node, const char* name, const std::vector<int64_t>& values, int64_t low,
                 int64_t high) {
  for (int64_t v : values)
    if (v < low || v > high) node.invalid("{} value {} is outside [{}, {}]", name, v, low, high);
}

// The node's input 0: rank 3 (1-D windows) or 4 (2-D windows).
const TensorInfo& signal_input(ImportContext& ctx, const OnnxNode& node) {
  const TensorInfo& x = ctx.input_info(node, 0);
  if (x.shape.size() != 3 && x.shape.size() != 4)
    node.unsupported("input '{}' has shape {}; mt supports 1-D, 2-D and 3-D windows only (rank 3 to 5 inputs)",
                     node.input(0), shape_str(x.shape));
  return x;
}

// The 2-D form of a 1-D attribute: `unit` (the value that leaves H alone) prepended to each half.
std::vector<int64_t> lift(std::vector<int64_t> values, size_t halves, int64_t unit) {
  const size_t half = values.size() / halves;
  if (half != 1) return values;
  for (size_t h = halves; h-- > 0;) values.insert(values.begin() + static_cast<std::ptrdiff_t>(h * half), unit);
  return values;
}

// A window attribute (strides, dilations, kernel_shape, output_padding) of `spatial` values, each in
// [low, kMaxWindow], returned in 2-D form.
std::vector<int64_t> window_attr(const OnnxNode& node, const char* name, size_t spatial, int64_t fallback,
                                 int64_t low = 1) {
  auto values = node.attr_ints(name, std::vector<int64_t>(spatial, fallback));
  if (values.size() != spatial)
    node.unsupported("{} has {} values for a {}-D window; mt supports 1-D and 2-D windows only", name, values.size(),
                     spatial);
  check_range(node, name, values, low, kMaxWindow);
  return lift(std::move(values), 1, low == 0 ? 0 : 1);
}

// The pads attribute of a `spatial`-D window, in 2-D form.
std::vector<int64_t> pads_attr(const OnnxNode& node, size_t spatial) {
  auto pads = node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (pads.size() != 2 * spatial)
    node.unsupported("pads has {} values for a {}-D window; mt supports 1-D and 2-D windows only", pads.size(), spatial);
  return lift(std::move(pads), 2, 0);
}

// The shape the 2-D op sees: N x C x 1 x L for a rank-3 input.
Shape as_2d_shape(Shape shape) {
  if (shape.size() == 3) shape.insert(shape.begin() + 2, 1);
  return shape;
}

// The node's input i as the 2-D op takes it: itself, or a rank-3 one with a unit axis at 2 (folded
// into the constant when it is one, as weights are).
std::string as_2d_input(ImportContext& ctx, const OnnxNode& node, size_t i) {
  const std::string name = ctx.input(node, i);
  if (ctx.input_info(node, i).shape.size() != 3) return name;
  return ctx.emit1(node, "unsqueeze", {name}, {{"axes", std::vector<int64_t>{2}}}, ctx.fresh_name(name + "/2d"));
}

// Emits the 2-D op for the node; for a 1-D signal its output gets the unit axis removed.
void emit_windowed(ImportContext& ctx, const OnnxNode& node, const std::string& op, std::vector<std::string> inputs,
                   Attributes attrs, bool one_d) {
  if (!one_d) {
    ctx.emit1(node, op, std::move(inputs), std::move(attrs), node.output(0));
    return;
  }
  const std::string out_2d = ctx.emit1(node, op, std::move(inputs), std::move(attrs), ctx.fresh_name(node.output(0) + "/2d"));
  ctx.emit1(node, "squeeze", {out_2d}, {{"axes", std::vector<int64_t>{2}}}, node.output(0));
}

// Explicit pads for auto_pad SAME_UPPER/SAME_LOWER (output = ceil(input / stride)) and VALID.
std::vector<int64_t> auto_pads(const OnnxNode& node, const std::string& mode, const Shape& input, const Window& w) {
  std::vector<int64_t> pads(4, 0);
  if (mode == "VALID") return pads;
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER") node.invalid("unknown auto_pad '{}'", mode);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t in = input[2 + i];
    const int64_t out = (in + w.strides[i] - 1) / w.strides[i];
    const int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
    const int64_t small = total / 2;
    pads[i] = mode == "SAME_UPPER" ? small : total - small;
    pads[i + 2] = total - pads[i];
  }
  return pads;
}

// Strides, dilations and pads (2-D form) of a conv or pool node with a `spatial`-D window whose
// kernel (2-D form) is `kernel`, on the 2-D form of its input shape.
Window window(const OnnxNode& node, const Shape& input_2d, std::vector<int64_t> kernel, size_t spatial) {
  Window w{.kernel = std::move(kernel),
           .strides = window_attr(node, "strides", spatial, 1),
           .dilations = window_attr(node, "dilations", spatial, 1),
           .pads = pads_attr(node, spatial)};
  check_range(node, "kernel size", w.kernel, 1, kMaxWindow);
  const std::string mode = node.attr_string("auto_pad", "NOTSET");
  if (mode != "NOTSET") w.pads = auto_pads(node, mode, input_2d, w);
  return w;
}

// The kernel of a conv node in 2-D form, from its weight (rank 3 for 1-D, 4 for 2-D).
std::vector<int64_t> conv_kernel(ImportContext& ctx, const OnnxNode& node, size_t spatial) {
  const TensorInfo& weight = ctx.input_info(node, 1);
  if (weight.shape.size() != spatial + 2)
    node.invalid("weight '{}' has shape {}, but the input has {} spatial axes", node.input(1),
                 shape_str(weight.shape), spatial);
  const std::vector<int64_t> kernel(weight.shape.begin() + 2, weight.shape.end());
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != kernel)
    node.invalid("kernel_shape does not match the weight's shape {}", shape_str(weight.shape));
  return lift(kernel, 1, 1);
}

// ONNX's pads of one axis for auto_pad SAME_UPPER/SAME_LOWER (output ceil(input / stride)) or VALID,
// as {begin, end}.
std::vector<int64_t> axis_auto_pads(const OnnxNode& node, const std::string& mode, int64_t in, int64_t kernel,
                                    int64_t stride, int64_t dilation) {
  Window w{.kernel = {1, kernel}, .strides = {1, stride}, .dilations = {1, dilation}, .pads = {}};
  const auto pads = auto_pads(node, mode, {1, 1, 1, in}, w);
  return {pads[1], pads[3]};
}

// Conv on a rank-5 input (3-D windows, N x C x D x H x W) as 2-D convolutions of every depth plane,
// one per kernel depth kd, summed: with the depth padded by zeros and the planes folded into the
// batch, y[:, :, d] = bias + sum over kd of conv2d(x[:, :, d * stride + kd * dilation], W[:, :, kd]).
// Every backend runs it; each conv2d covers every plane, so a depth stride above 1 costs the
// planes it skips.
void conv_3d(ImportContext& ctx, const OnnxNode& node, const TensorInfo& x) {
  const TensorInfo& weight = ctx.input_info(node, 1);
  if (weight.shape.size() != 5)
    node.invalid("weight '{}' has shape {}, but the input has 3 spatial axes", node.input(1), shape_str(weight.shape));
  const std::vector<int64_t> kernel(weight.shape.begin() + 2, weight.shape.end());
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != kernel)
    node.invalid("kernel_shape does not match the weight's shape {}", shape_str(weight.shape));
  auto triple = [&](const char* name, int64_t fallback) {
    auto values = node.attr_ints(name, {fallback, fallback, fallback});
    if (values.size() != 3) node.invalid("{} has {} values for a 3-D window", name, values.size());
    check_range(node, name, values, 1, kMaxWindow);
    return values;
  };
  const auto strides = triple("strides", 1), dilations = triple("dilations", 1);
  check_range(node, "kernel size", kernel, 1, kMaxWindow);
  auto pads = node.attr_ints("pads", std::vector<int64_t>(6, 0));
  if (pads.size() != 6) node.invalid("pads has {} values for a 3-D window", pads.size());
  check_range(node, "pads", pads, 0, kMaxWindow);
  if (const std::string mode = node.attr_string("auto_pad", "NOTSET"); mode != "NOTSET")
    for (size_t a = 0; a < 3; ++a) {
      const auto axis = axis_auto_pads(node, mode, x.shape[2 + a], kernel[a], strides[a], dilations[a]);
      pads[a] = axis[0], pads[a + 3] = axis[1];
    }
  const int64_t n = x.shape[0], c = x.shape[1], depth = x.shape[2] + pads[0] + pads[3];
  const int64_t reach = (kernel[0] - 1) * dilations[0] + 1;
  if (depth < reach) node.invalid("the kernel's depth {} is larger than the padded input's {}", reach, depth);
  const int64_t out_depth = (depth - reach) / strides[0] + 1;
  using Ints = std::vector<int64_t>;
  auto fresh = [&](const char* what) { return ctx.fresh_name(node.output(0) + "/" + what); };

  std::string planes = ctx.input(node, 0);
  if (pads[0] != 0 || pads[3] != 0)
    planes = ctx.emit1(node, "pad", {planes},
                       {{"pads", Ints{0, 0, pads[0], 0, 0, 0, 0, pads[3], 0, 0}}, {"mode", std::string("constant")},
                        {"value", 0.0}},
                       fresh("padded"));
  planes = ctx.emit1(node, "transpose", {planes}, {{"perm", Ints{0, 2, 1, 3, 4}}}, fresh("depth_major"));
  planes = ctx.emit1(node, "reshape", {planes}, {{"shape", Ints{n * depth, c, x.shape[3], x.shape[4]}}},
                     fresh("planes"));
  const Attributes conv_attrs{{"strides", Ints{strides[1], strides[2]}},
                              {"pads", Ints{pads[1], pads[2], pads[4], pads[5]}},
                              {"dilations", Ints{dilations[1], dilations[2]}},
                              {"group", node.attr_int("group", 1)}};
  std::string sum;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    std::string w = ctx.emit1(node, "slice", {ctx.input(node, 1)},
                              {{"starts", Ints{kd}}, {"ends", Ints{kd + 1}}, {"axes", Ints{2}}}, fresh("weight"));
    w = ctx.emit1(node, "reshape", {w},
                  {{"shape", Ints{weight.shape[0], weight.shape[1], kernel[1], kernel[2]}}}, fresh("weight"));
    std::vector<std::string> inputs{planes, w};
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
  ctx.emit1(node, "transpose", {sum}, {{"perm", Ints{0, 2, 1, 3, 4}}}, node.output(0));
}

void conv(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (const TensorInfo& x = ctx.input_info(node, 0); x.shape.size() == 5) return conv_3d(ctx, node, x);
  const TensorInfo& x = signal_input(ctx, node);
  const size_t spatial = x.shape.size() - 2;
  const Window w = window(node, as_2d_shape(x.shape), conv_kernel(ctx, node, spatial), spatial);
  std::vector<std::string> inputs{as_2d_input(ctx, node, 0), as_2d_input(ctx, node, 1)};
  if (node.has_input(2)) inputs.push_back(ctx.input(node, 2));
  emit_windowed(
      ctx, node, "conv2d", inputs,
      {{"strides", w.strides}, {"pads", w.pads}, {"dilations", w.dilations}, {"group", node.attr_int("group", 1)}},
      spatial == 1);
}

// ConvTranspose's pads (all begins, then all ends) and output_padding over the spatial axes of sizes
// `in`, from output_shape or auto_pad as the ONNX operator documentation gives them: total padding
// split in half, the odd element at the end for SAME_UPPER, else at the start; an output_shape
// larger than the unpadded output grows it at the end (output_padding).
void transpose_pads(const OnnxNode& node, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                    const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                    std::vector<int64_t> output_shape, std::vector<int64_t>& pads, std::vector<int64_t>& output_padding) {
  const size_t axes = in.size();
  const std::string mode = node.attr_string("auto_pad", "NOTSET");
  if (!node.has_attr("output_shape") && (mode == "SAME_UPPER" || mode == "SAME_LOWER")) {
    output_shape.clear();
    for (size_t i = 0; i < axes; ++i) output_shape.push_back(in[i] * strides[i]);
  }
  if (!output_shape.empty()) {
    for (size_t i = 0; i < axes; ++i) {
      int64_t total =
          strides[i] * (in[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1 - output_shape[i];
      if (total < 0) {  // the requested output is larger: grow it at the end
        output_padding[i] -= total;
        total = 0;
      }
      pads[i] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + axes] = total - pads[i];
    }
  } else if (mode == "VALID") {
    std::fill(pads.begin(), pads.end(), 0);
  } else if (mode != "NOTSET") {
    node.invalid("unknown auto_pad '{}'", mode);
  }
}

// output_shape with `spatial` values (the N and C entries dropped when given), or empty.
std::vector<int64_t> output_shape_attr(const OnnxNode& node, size_t spatial) {
  std::vector<int64_t> output_shape = node.attr_ints("output_shape");
  check_range(node, "output_shape", output_shape, 0, kMaxElements);
  if (output_shape.size() == spatial + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != spatial)
    node.invalid("output_shape must have {} values, got {}", spatial, output_shape.size());
  return output_shape;
}

// ConvTranspose on a rank-5 input (3-D windows): a 2-D transposed convolution of every depth plane
// (planes folded into the batch) per kernel depth kd, whose output plane i belongs at depth
// i * stride + kd * dilation - pad_begin: spread by the stride (zero planes between), shifted there
// (pad, or crop with negative pads), summed over kd; the bias is added once, at the end.
void conv_transpose_3d(ImportContext& ctx, const OnnxNode& node, const TensorInfo& x) {
  const TensorInfo& weight = ctx.input_info(node, 1);
  if (weight.shape.size() != 5)
    node.invalid("weight '{}' has shape {}, but the input has 3 spatial axes", node.input(1), shape_str(weight.shape));
  const std::vector<int64_t> kernel(weight.shape.begin() + 2, weight.shape.end());
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != kernel)
    node.invalid("kernel_shape does not match the weight's shape {}", shape_str(weight.shape));
  check_range(node, "kernel size", kernel, 1, kMaxWindow);
  auto triple = [&](const char* name, int64_t fallback, int64_t low) {
    auto values = node.attr_ints(name, {fallback, fallback, fallback});
    if (values.size() != 3) node.invalid("{} has {} values for a 3-D window", name, values.size());
    check_range(node, name, values, low, kMaxWindow);
    return values;
  };
  const auto strides = triple("strides", 1, 1), dilations = triple("dilations", 1, 1);
  auto output_padding = triple("output_padding", 0, 0);
  auto pads = node.attr_ints("pads", std::vector<int64_t>(6, 0));
  if (pads.size() != 6) node.invalid("pads has {} values for a 3-D window", pads.size());
  check_range(node, "pads", pads, 0, kMaxWindow);
  transpose_pads(node, {x.shape[2], x.shape[3], x.shape[4]}, kernel, strides, dilations, output_shape_attr(node, 3),
                 pads, output_padding);
  const int64_t n = x.shape[0], c = x.shape[1], in_depth = x.shape[2];
  const int64_t out_depth =
      strides[0] * (in_depth - 1) + output_padding[0] + (kernel[0] - 1) * dilations[0] + 1 - pads[0] - pads[3];
  if (out_depth < 1) node.invalid("the output depth would be {}", out_depth);
  using Ints = std::vector<int64_t>;
  auto fresh = [&](const char* what) { return ctx.fresh_name(node.output(0) + "/" + what); };

  std::string planes = ctx.emit1(node, "transpose", {ctx.input(node, 0)}, {{"perm", Ints{0, 2, 1, 3, 4}}},
                                 fresh("depth_major"));
  planes = ctx.emit1(node, "reshape", {planes}, {{"shape", Ints{n * in_depth, c, x.shape[3], x.shape[4]}}},
                     fresh("planes"));
  const Attributes attrs{{"strides", Ints{strides[1], strides[2]}},
                         {"pads", Ints{pads[1], pads[2], pads[4], pads[5]}},
                         {"dilations", Ints{dilations[1], dilations[2]}},
                         {"group", node.attr_int("group", 1)},
                         {"output_padding", Ints{output_padding[1], output_padding[2]}}};
  std::string sum;
  Shape plane_out;
  for (int64_t kd = 0; kd < kernel[0]; ++kd) {
    std::string w = ctx.emit1(node, "slice", {ctx.input(node, 1)},
                              {{"starts", Ints{kd}}, {"ends", Ints{kd + 1}}, {"axes", Ints{2}}}, fresh("weight"));
    w = ctx.emit1(node, "reshape", {w}, {{"shape", Ints{weight.shape[0], weight.shape[1], kernel[1], kernel[2]}}},
                  fresh("weight"));
    const std::string z = ctx.emit1(node, "conv_transpose2d", {planes, w}, attrs, fresh("tap"));
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
  ctx.emit1(node, "transpose", {sum}, {{"perm", Ints{0, 2, 1, 3, 4}}}, node.output(0));
}

void conv_transpose(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (const TensorInfo& x = ctx.input_info(node, 0); x.shape.size() == 5) return conv_transpose_3d(ctx, node, x);
  const TensorInfo& x = signal_input(ctx, node);
  const size_t spatial = x.shape.size() - 2;
  const Shape x_2d = as_2d_shape(x.shape);
  const std::vector<int64_t> kernel = conv_kernel(ctx, node, spatial);
  Window w{.kernel = kernel,
           .strides = window_attr(node, "strides", spatial, 1),
           .dilations = window_attr(node, "dilations", spatial, 1),
           .pads = pads_attr(node, spatial)};
  check_range(node, "kernel size", kernel, 1, kMaxWindow);
  std::vector<int64_t> output_padding = window_attr(node, "output_padding", spatial, 0, 0);
  transpose_pads(node, {x_2d[2], x_2d[3]}, kernel, w.strides, w.dilations,
                 lift(output_shape_attr(node, spatial), 1, 1), w.pads, output_padding);
  std::vector<std::string> inputs{as_2d_input(ctx, node, 0), as_2d_input(ctx, node, 1)};
  if (node.has_input(2)) inputs.push_back(ctx.input(node, 2));
  emit_windowed(ctx, node, "conv_transpose2d", inputs,
                {{"strides", w.strides},
                 {"pads", w.pads},
                 {"dilations", w.dilations},
                 {"group", node.attr_int("group", 1)},
                 {"output_padding", output_padding}},
                spatial == 1);
}

// MaxPool and AveragePool on a rank-5 input (3-D windows) as the 2-D pool of every depth plane
// (planes folded into the batch), then the maximum or the sum of the planes each depth window
// covers, sliced by the depth stride. The average's depth divisor (the planes counted, which differ
// at the borders) multiplies the sum; the 2-D pool divides by the rest of the window's count.
void pool_3d(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op, const TensorInfo& x) {
  const bool max = mt_op == "max_pool2d";
  auto triple = [&](const char* name, int64_t fallback) {
    auto values = node.attr_ints(name, {fallback, fallback, fallback});
    if (values.size() != 3) node.invalid("{} has {} values for a 3-D window", name, values.size());
    check_range(node, name, values, 1, kMaxWindow);
    return values;
  };
  if (!node.has_attr("kernel_shape")) node.invalid("attribute 'kernel_shape' is required");
  const auto kernel = triple("kernel_shape", 1), strides = triple("strides", 1), dilations = triple("dilations", 1);
  if (!max && dilations != std::vector<int64_t>{1, 1, 1}) node.unsupported("dilated average pooling");
  if (max && node.attr_int("storage_order", 0) != 0)
    node.unsupported("storage_order {} (column-major indices)", node.attr_int("storage_order", 0));
  auto pads = node.attr_ints("pads", std::vector<int64_t>(6, 0));
  if (pads.size() != 6) node.invalid("pads has {} values for a 3-D window", pads.size());
  check_range(node, "pads", pads, 0, kMaxWindow);
  if (const std::string mode = node.attr_string("auto_pad", "NOTSET"); mode != "NOTSET")
    for (size_t a = 0; a < 3; ++a) {
      const auto axis = axis_auto_pads(node, mode, x.shape[2 + a], kernel[a], strides[a], dilations[a]);
      pads[a] = axis[0], pads[a + 3] = axis[1];
    }
  const int64_t ceil_mode = node.attr_int("ceil_mode", 0);
  // Depth windows as the 2-D pools count them (PyTorch's rule): rounded up with ceil_mode, but the
  // last one starts inside the input or its leading padding.
  const int64_t in_depth = x.shape[2], reach = (kernel[0] - 1) * dilations[0] + 1;
  const int64_t span = in_depth + pads[0] + pads[3] - reach;
  if (span < 0) node.invalid("the window's depth {} is larger than the padded input's {}", reach, span + reach);
  int64_t out_depth = (ceil_mode ? (span + strides[0] - 1) / strides[0] : span / strides[0]) + 1;
  if (ceil_mode && (out_depth - 1) * strides[0] >= in_depth + pads[0]) --out_depth;
  const int64_t past_end = std::max<int64_t>(0, (out_depth - 1) * strides[0] + reach - (in_depth + pads[0] + pads[3]));
  const int64_t n = x.shape[0], c = x.shape[1], depth = in_depth + pads[0] + pads[3] + past_end;
  using Ints = std::vector<int64_t>;
  auto fresh = [&](const char* what) { return ctx.fresh_name(node.output(0) + "/" + what); };

  // Padded planes never win a maximum (each window holds an input plane) and add nothing to a sum.
  std::string planes = ctx.input(node, 0);
  if (depth != in_depth)
    planes = ctx.emit1(node, "pad", {planes},
                       {{"pads", Ints{0, 0, pads[0], 0, 0, 0, 0, pads[3] + past_end, 0, 0}},
                        {"mode", std::string("constant")},
                        {"value", max ? -static_cast<double>(std::numeric_limits<float>::max()) : 0.0}},
                       fresh("padded"));
  planes = ctx.emit1(node, "transpose", {planes}, {{"perm", Ints{0, 2, 1, 3, 4}}}, fresh("depth_major"));
  planes = ctx.emit1(node, "reshape", {planes}, {{"shape", Ints{n * depth, c, x.shape[3], x.shape[4]}}},
                     fresh("planes"));
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
  ctx.emit1(node, "transpose", {acc}, {{"perm", Ints{0, 2, 1, 3, 4}}}, node.output(0));
}

void pool(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  require_only_first_output(ctx, node, "the pooling indices");
  if (const TensorInfo& x = ctx.input_info(node, 0); x.shape.size() == 5) return pool_3d(ctx, node, mt_op, x);
  const TensorInfo& x = signal_input(ctx, node);
  const size_t spatial = x.shape.size() - 2;
  if (!node.has_attr("kernel_shape")) node.invalid("attribute 'kernel_shape' is required");
  const std::vector<int64_t> kernel = window_attr(node, "kernel_shape", spatial, 1);
  const Window w = window(node, as_2d_shape(x.shape), kernel, spatial);
  Attributes attrs{{"kernel_shape", w.kernel},
                   {"strides", w.strides},
                   {"pads", w.pads},
                   {"ceil_mode", node.attr_int("ceil_mode", 0)}};
  if (mt_op == "max_pool2d") {
    if (node.attr_int("storage_order", 0) != 0)
      node.unsupported("storage_order {} (column-major indices)", node.attr_int("storage_order", 0));
    attrs["dilations"] = w.dilations;
  } else {
    if (w.dilations != std::vector<int64_t>{1, 1}) node.unsupported("dilated average pooling");
    attrs["count_include_pad"] = node.attr_int("count_include_pad", 0);
  }
  emit_windowed(ctx, node, mt_op, {as_2d_input(ctx, node, 0)}, attrs, spatial == 1);
}

void global_pool(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  ctx.emit1(node, mt_op, {ctx.input(node, 0)}, {}, node.output(0));
}

}  // namespace

void add_conv_translators(TranslatorTable& table) {
  table.add("Conv", conv);
  table.add("ConvTranspose", conv_transpose);
  table.add("MaxPool", pool, "max_pool2d");
  table.add("AveragePool", pool, "avg_pool2d");
  table.add("GlobalAveragePool", global_pool, "global_avg_pool");
  table.add("GlobalMaxPool", global_pool, "global_max_pool");
}

}  // namespace mt::onnx_import
