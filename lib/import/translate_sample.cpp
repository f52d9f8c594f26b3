// Rules for ONNX's ops that read or write an image at computed positions: GridSample, RoiAlign and
// MaxUnpool, as mt's grid_sample, roi_align and max_unpool (the sample family).
#include "lib/import/translators.h"

namespace mt::onnx_import {

namespace {

// GridSample: 4-D images; opset 20's names linear and cubic are opset 16's bilinear and bicubic.
void grid_sample(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  input_of_rank(ctx, node, 0, 4, "X");
  std::string mode = node.attr_string("mode", node.opset() >= 20 ? "linear" : "bilinear");
  if (mode == "linear") mode = "bilinear";
  if (mode == "cubic") mode = "bicubic";
  ctx.emit1(node, "grid_sample", {ctx.input(node, 0), ctx.input(node, 1)},
            {{"mode", mode},
             {"padding_mode", node.attr_string("padding_mode", "zeros")},
             {"align_corners", node.attr_int("align_corners", 0)}},
            node.output(0));
}

// RoiAlign: before opset 16 the regions map to pixels without the half-pixel offset
// (output_half_pixel); from 16 on half_pixel is the default.
void roi_align(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string transform =
      node.attr_string("coordinate_transformation_mode", node.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    node.invalid("coordinate_transformation_mode '{}' is not half_pixel or output_half_pixel", transform);
  ctx.emit1(node, "roi_align", {ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)},
            {{"mode", node.attr_string("mode", "avg")},
             {"output_height", node.attr_int("output_height", 1)},
             {"output_width", node.attr_int("output_width", 1)},
             {"sampling_ratio", node.attr_int("sampling_ratio", 0)},
             {"spatial_scale", node.attr_float("spatial_scale", 1.0)},
             {"half_pixel", int64_t{transform == "half_pixel" ? 1 : 0}}},
            node.output(0));
}

// MaxUnpool: the indices address the unpooled shape, each spatial size (in - 1) * stride + kernel -
// pads; an output_shape operand (constant after shape folding) may enlarge the output, the values
// keeping their coordinates (as ONNX's reference and ONNX Runtime place them).
void max_unpool(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& x = ctx.input_info(node, 0);
  if (x.shape.size() < 3) node.invalid("input '{}' {} must be [N, C, spatial...]", node.input(0), shape_str(x.shape));
  const size_t spatial = x.shape.size() - 2;
  const std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  const std::vector<int64_t> strides = node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  const std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial)
    node.invalid("kernel_shape, strides and pads must have {}, {} and {} values", spatial, spatial, 2 * spatial);
  std::vector<int64_t> unpooled{x.shape[0], x.shape[1]};
  for (size_t d = 0; d < spatial; ++d)
    unpooled.push_back((x.shape[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + spatial]);
  Attributes attrs{{"output_shape", unpooled}};
  if (node.has_input(2)) {
    const std::vector<int64_t> shape = ctx.const_ints(node, 2, "output_shape");
    if (shape != unpooled) attrs = {{"output_shape", shape}, {"index_shape", unpooled}};
  }
  ctx.emit1(node, "max_unpool", {ctx.input(node, 0), ctx.input(node, 1)}, attrs, node.output(0));
}

}  // namespace

void add_sample_translators(TranslatorTable& table) {
  table.add("GridSample", grid_sample);
  table.add("RoiAlign", roi_align);
  table.add("MaxUnpool", max_unpool);
}

}  // namespace mt::onnx_import
