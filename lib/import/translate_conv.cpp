// Rules for 2-D convolution and pooling: Conv, ConvTranspose, MaxPool, AveragePool and the global
// pools. ONNX auto_pad and output_shape become explicit pads, which is all the mt ops know.
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

// A 2-value window attribute (strides, dilations, kernel_shape, output_padding), each in [low, kMaxWindow].
std::vector<int64_t> pair_attr(const OnnxNode& node, const char* name, int64_t fallback, int64_t low = 1) {
  auto values = node.attr_ints(name, {fallback, fallback});
  if (values.size() != 2) node.unsupported("{} has {} values; mt supports 2-D windows only", name, values.size());
  check_range(node, name, values, low, kMaxWindow);
  return values;
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

// Strides, dilations and pads of a conv or pool node whose window is `kernel`.
Window window(const OnnxNode& node, const Shape& input, std::vector<int64_t> kernel) {
  Window w{.kernel = std::move(kernel),
           .strides = pair_attr(node, "strides", 1),
           .dilations = pair_attr(node, "dilations", 1),
           .pads = node.attr_ints("pads", {0, 0, 0, 0})};
  if (w.pads.size() != 4) node.unsupported("pads has {} values; mt supports 2-D windows only", w.pads.size());
  check_range(node, "kernel size", w.kernel, 1, kMaxWindow);
  const std::string mode = node.attr_string("auto_pad", "NOTSET");
  if (mode != "NOTSET") w.pads = auto_pads(node, mode, input, w);
  return w;
}

void conv(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& x = input_of_rank(ctx, node, 0, 4, "input");
  const TensorInfo& weight = input_of_rank(ctx, node, 1, 4, "weight");
  const std::vector<int64_t> kernel(weight.shape.begin() + 2, weight.shape.end());
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != kernel)
    node.invalid("kernel_shape does not match the weight's shape {}", shape_str(weight.shape));
  const Window w = window(node, x.shape, kernel);
  std::vector<std::string> inputs{ctx.input(node, 0), ctx.input(node, 1)};
  if (node.has_input(2)) inputs.push_back(ctx.input(node, 2));
  ctx.emit1(
      node, "conv2d", inputs,
      {{"strides", w.strides}, {"pads", w.pads}, {"dilations", w.dilations}, {"group", node.attr_int("group", 1)}},
      node.output(0));
}

// ConvTranspose pads from output_shape or auto_pad, as the ONNX operator documentation gives
// them: total padding split in half, the odd pixel at the end for SAME_UPPER, else at the start.
void conv_transpose(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& x = input_of_rank(ctx, node, 0, 4, "input");
  const TensorInfo& weight = input_of_rank(ctx, node, 1, 4, "weight");
  const std::vector<int64_t> kernel(weight.shape.begin() + 2, weight.shape.end());
  if (node.has_attr("kernel_shape") && node.attr_ints("kernel_shape") != kernel)
    node.invalid("kernel_shape does not match the weight's shape {}", shape_str(weight.shape));
  const std::string mode = node.attr_string("auto_pad", "NOTSET");
  Window w{.kernel = kernel,
           .strides = pair_attr(node, "strides", 1),
           .dilations = pair_attr(node, "dilations", 1),
           .pads = node.attr_ints("pads", {0, 0, 0, 0})};
  if (w.pads.size() != 4) node.unsupported("pads has {} values; mt supports 2-D windows only", w.pads.size());
  check_range(node, "kernel size", kernel, 1, kMaxWindow);
  std::vector<int64_t> output_padding = pair_attr(node, "output_padding", 0, 0);
  std::vector<int64_t> output_shape = node.attr_ints("output_shape");
  check_range(node, "output_shape", output_shape, 0, kMaxElements);
  if (output_shape.size() == 4) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!node.has_attr("output_shape") && (mode == "SAME_UPPER" || mode == "SAME_LOWER"))
    output_shape = {x.shape[2] * w.strides[0], x.shape[3] * w.strides[1]};
  if (!output_shape.empty()) {
    if (output_shape.size() != 2) node.invalid("output_shape must have 2 values, got {}", output_shape.size());
    for (size_t i = 0; i < 2; ++i) {
      int64_t total = w.strides[i] * (x.shape[2 + i] - 1) + output_padding[i] + (kernel[i] - 1) * w.dilations[i] + 1 -
                      output_shape[i];
      if (total < 0) {  // the requested output is larger: grow it at the end
        output_padding[i] -= total;
        total = 0;
      }
      w.pads[i] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pads[i + 2] = total - w.pads[i];
    }
  } else if (mode == "VALID") {
    w.pads = {0, 0, 0, 0};
  } else if (mode != "NOTSET") {
    node.invalid("unknown auto_pad '{}'", mode);
  }
  std::vector<std::string> inputs{ctx.input(node, 0), ctx.input(node, 1)};
  if (node.has_input(2)) inputs.push_back(ctx.input(node, 2));
  ctx.emit1(node, "conv_transpose2d", inputs,
            {{"strides", w.strides},
             {"pads", w.pads},
             {"dilations", w.dilations},
             {"group", node.attr_int("group", 1)},
             {"output_padding", output_padding}},
            node.output(0));
}

void pool(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  require_only_first_output(ctx, node, "the pooling indices");
  const TensorInfo& x = input_of_rank(ctx, node, 0, 4, "input");
  if (!node.has_attr("kernel_shape")) node.invalid("attribute 'kernel_shape' is required");
  const std::vector<int64_t> kernel = pair_attr(node, "kernel_shape", 1);
  const Window w = window(node, x.shape, kernel);
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
  ctx.emit1(node, mt_op, {ctx.input(node, 0)}, attrs, node.output(0));
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
