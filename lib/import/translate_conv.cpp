// Rules for convolution and pooling: Conv, ConvTranspose, MaxPool and AveragePool with 1-D, 2-D or 3-D
// windows, and the global pools. ONNX auto_pad and output_shape become explicit pads, which is all the mt
// ops know.
//
// 1-D signals (rank-3 inputs, N x C x L) run as 2-D ones with H = 1, so that every backend's 2-D
// kernels serve them: the input and the weight get a unit axis at 2, each window attribute a
// leading entry that leaves H alone (kernel 1, stride 1, dilation 1, no padding, no output
// padding), and the output loses the axis again. ONNX's size, pads and auto_pad arithmetic is per
// axis, so the H axis maps 1 -> 1 and the L axis computes exactly what the 1-D operator does.
// 3-D windows (rank 5) are lowered in translate_conv3d.cpp.
#include "lib/import/conv_window.h"
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

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

// MaxPool's second output, the indices of the maxima, is max_pool2d_indices beside max_pool2d, for
// 2-D windows.
void pool(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  const bool indices = node.num_outputs() > 1 && !node.output(1).empty() && ctx.is_used(node.output(1));
  if (indices && ctx.input_info(node, 0).shape.size() != 4)
    node.unsupported("output 1 ('{}', the pooling indices) is used, and mt computes them for 2-D windows only",
                     node.output(1));
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
    attrs["dilations"] = w.dilations;
  } else {
    if (w.dilations != std::vector<int64_t>{1, 1}) node.unsupported("dilated average pooling");
    attrs["count_include_pad"] = node.attr_int("count_include_pad", 0);
  }
  emit_windowed(ctx, node, mt_op, {as_2d_input(ctx, node, 0)}, attrs, spatial == 1);
  if (indices) {
    attrs["storage_order"] = node.attr_int("storage_order", 0);  // the indices' order (values are the same)
    ctx.emit1(node, "max_pool2d_indices", {ctx.input(node, 0)}, attrs, node.output(1));
  }
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
