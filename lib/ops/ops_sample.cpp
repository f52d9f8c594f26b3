// Op schemas of the sample family: grid_sample, roi_align and max_unpool, which read or write an
// NCHW image at positions computed at run time (a sampling grid, regions of interest, pooling
// indices). Their loops are lib/ops/sample_loops.h.
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"
#include "lib/ops/sample_loops.h"

namespace mt {
namespace {

void require_float(const InferContext& context, size_t index) {
  if (context.input(index).dtype != DType::f32)
    context.fail("input {} ('{}') must be float32, not {}", index, context.input(index).name,
                 dtype_name(context.input(index).dtype));
}

void require_indices(const InferContext& context, size_t index) {
  const DType dtype = context.input(index).dtype;
  if (dtype != DType::i64 && dtype != DType::i32)
    context.fail("input {} ('{}') must be int64 or int32, not {}", index, context.input(index).name, dtype_name(dtype));
}

std::vector<TensorType> infer_grid_sample(const InferContext& context) {
  require_rank(context, 0, 4, 4);
  require_rank(context, 1, 4, 4);
  require_float(context, 0);
  require_float(context, 1);
  const Shape& x = context.input(0).shape;
  const Shape& grid = context.input(1).shape;
  if (grid[0] != x[0] || grid[3] != 2)
    context.fail("grid {} must be [N, H_out, W_out, 2] with N = {} (the input's batch)", shape_str(grid), x[0]);
  if (!sample_mode(context.attr_string("mode")))
    context.fail("attribute 'mode' = \"{}\" is not bilinear, nearest or bicubic", context.attr_string("mode"));
  if (!sample_padding(context.attr_string("padding_mode")))
    context.fail("attribute 'padding_mode' = \"{}\" is not zeros, border or reflection",
                 context.attr_string("padding_mode"));
  checked_flag(context, "align_corners");
  if (x[2] < 1 || x[3] < 1) context.fail("input {} has an empty image", shape_str(x));
  return {{DType::f32, {x[0], x[1], grid[1], grid[2]}}};
}

std::vector<TensorType> infer_roi_align(const InferContext& context) {
  require_rank(context, 0, 4, 4);
  require_float(context, 0);
  require_float(context, 1);
  require_indices(context, 2);
  const Shape& x = context.input(0).shape;
  const Shape& rois = context.input(1).shape;
  if (rois.size() != 2 || rois[1] != 4) context.fail("rois {} must be [R, 4]", shape_str(rois));
  if (context.input(2).shape != Shape{rois[0]})
    context.fail("batch_indices {} must be [{}], one per region", shape_str(context.input(2).shape), rois[0]);
  const std::string& mode = context.attr_string("mode");
  if (mode != "avg" && mode != "max") context.fail("attribute 'mode' = \"{}\" is not avg or max", mode);
  checked_flag(context, "half_pixel");
  const int64_t height = context.attr_int("output_height"), width = context.attr_int("output_width");
  if (height < 1 || width < 1 || height > kMaxElements || width > kMaxElements)
    context.fail("output_height {} and output_width {} must be positive", height, width);
  if (context.attr_int("sampling_ratio") < 0 || context.attr_int("sampling_ratio") > 1024)
    context.fail("attribute 'sampling_ratio' = {} must be in [0, 1024]", context.attr_int("sampling_ratio"));
  if (x[2] < 1 || x[3] < 1) context.fail("input {} has an empty image", shape_str(x));
  const Shape out{rois[0], x[1], height, width};
  if (!checked_numel(out)) context.fail("the output shape {} is too large", shape_str(out));
  return {{DType::f32, out}};
}

std::vector<TensorType> infer_max_unpool(const InferContext& context) {
  require_rank(context, 0, 3);
  require_float(context, 0);
  require_indices(context, 1);
  const Shape& x = context.input(0).shape;
  if (context.input(1).shape != x)
    context.fail("indices {} must have the shape of the input {}", shape_str(context.input(1).shape), shape_str(x));
  const Shape out = context.attr_ints("output_shape");
  if (out.size() != x.size() || out[0] != x[0] || out[1] != x[1])
    context.fail("attribute 'output_shape' {} must keep the input's rank and first two dims {}", shape_str(out),
                 shape_str(x));
  if (!checked_numel(out)) context.fail("the output shape {} is invalid or too large", shape_str(out));
  const Shape& index_shape = context.attr_ints("index_shape");
  if (!index_shape.empty()) {
    bool fits = index_shape.size() == out.size();
    for (size_t d = 0; fits && d < out.size(); ++d) fits = index_shape[d] >= 1 && index_shape[d] <= out[d];
    if (!fits)
      context.fail("attribute 'index_shape' {} must fit within 'output_shape' {}", shape_str(index_shape),
                   shape_str(out));
  }
  return {{DType::f32, out}};
}

}  // namespace

void register_sample_ops(OpRegistry& registry) {
  registry.add(OpSchema{"grid_sample",
                        "samples X [N,C,H,W] at the points of grid [N,H_out,W_out,2] ((x, y) in [-1, 1]): 'mode' "
                        "bilinear, nearest or bicubic; 'padding_mode' zeros, border or reflection; 'align_corners'",
                        {"X", "grid"},
                        false,
                        1,
                        {{"mode", AttrType::string, Attribute{std::string("bilinear")}},
                         {"padding_mode", AttrType::string, Attribute{std::string("zeros")}},
                         {"align_corners", AttrType::integer, Attribute{int64_t{0}}}},
                        infer_grid_sample});
  registry.add(OpSchema{"roi_align",
                        "pools each region rois[r] = [x1, y1, x2, y2] of image batch_indices[r] into "
                        "output_height x output_width bins of bilinear samples ('mode' avg or max)",
                        {"X", "rois", "batch_indices"},
                        false,
                        1,
                        {{"mode", AttrType::string, Attribute{std::string("avg")}},
                         {"output_height", AttrType::integer, Attribute{int64_t{1}}},
                         {"output_width", AttrType::integer, Attribute{int64_t{1}}},
                         {"sampling_ratio", AttrType::integer, Attribute{int64_t{0}}},
                         {"spatial_scale", AttrType::real, Attribute{1.0}},
                         {"half_pixel", AttrType::integer, Attribute{int64_t{1}}}},
                        infer_roi_align});
  registry.add(OpSchema{"max_unpool",
                        "zeros of 'output_shape' with X[i] written where the flat position indices[i] in a "
                        "tensor of 'index_shape' (empty: the output's) lies",
                        {"X", "indices"},
                        false,
                        1,
                        {{"output_shape", AttrType::integers, std::nullopt},
                         {"index_shape", AttrType::integers, Attribute{std::vector<int64_t>{}}}},
                        infer_max_unpool});
}

}  // namespace mt
