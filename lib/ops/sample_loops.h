// The loops of the sample family (grid_sample, roi_align, max_unpool) over row-major NCHW float32
// tensors. The reference kernels and the cpu backend both run these, so they agree exactly; a
// backend splits the work by output rows (grid_sample), regions (roi_align) or not at all.
// Parameters that depend only on shapes and attributes are computed once into the *Params structs.
// Index operands (roi_align's batch indices, max_unpool's positions) are checked on every run
// before anything is written: Error(invalid_input) naming the node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "lib/ir/graph.h"
#include "lib/ops/index_loops.h"

namespace mt {

// grid_sample (ONNX GridSample, PyTorch's grid_sample): y[n][c][i][j] samples x[n][c] at the point
// grid[n][i][j] = (x, y) in [-1, 1], mapped to pixels by align_corners, with the padding mode for
// points outside.
enum class SampleMode { bilinear, nearest, bicubic };
enum class SamplePadding { zeros, border, reflection };
std::optional<SampleMode> sample_mode(std::string_view name);        // "bilinear", "nearest", "bicubic"
std::optional<SamplePadding> sample_padding(std::string_view name);  // "zeros", "border", "reflection"

struct GridSampleParams {
  int64_t batch = 0, channels = 0, height = 0, width = 0, out_height = 0, out_width = 0;
  SampleMode mode = SampleMode::bilinear;
  SamplePadding padding = SamplePadding::zeros;
  bool align_corners = false;
};
// The parameters of grid_sample node `node` (its attributes) on X and grid of these shapes.
GridSampleParams grid_sample_params(const Node& node, const Shape& x, const Shape& grid);
// Output rows [begin, end) of batch * out_height.
void grid_sample_rows(const GridSampleParams& params, const float* x, const float* grid, float* y, int64_t begin,
                      int64_t end);

// roi_align (ONNX RoiAlign): region r of rois ([x1, y1, x2, y2] in input pixels / spatial_scale)
// over image batch_indices[r], pooled to out_height x out_width bins, each the average (or the
// maximum) of sampling_ratio^2 bilinear samples (adaptive: ceil(bin size) per axis when 0).
struct RoiAlignParams {
  int64_t batch = 0, channels = 0, height = 0, width = 0, rois = 0, out_height = 0, out_width = 0;
  int64_t sampling_ratio = 0;
  float spatial_scale = 1.0f;
  bool half_pixel = true;  // coordinate_transformation_mode half_pixel (else output_half_pixel)
  bool max = false;        // mode max (else avg)
};
// The parameters of roi_align node `node` (its attributes) on X of shape `x` with `rois` regions.
RoiAlignParams roi_align_params(const Node& node, const Shape& x, int64_t rois);
// The most points adaptive sampling (sampling_ratio 0) takes per bin and axis: ceil(bin size) beyond
// it comes from regions far larger than any image, which would make a run take forever.
inline constexpr float kMaxAdaptiveSamples = 4096;
// Checks every batch index against the batch size, and every region for finite bins that adaptive
// sampling can cover (kMaxAdaptiveSamples).
void roi_align_check(const RoiAlignParams& params, const std::string& node, const float* rois, IndexData batch_indices);
// Regions [begin, end); the batch indices checked first.
void roi_align_rois(const RoiAlignParams& params, const float* x, const float* rois, IndexData batch_indices, float* y,
                    int64_t begin, int64_t end);

// max_unpool (ONNX MaxUnpool): y is zero but for x[i] written at the position indices[i] names,
// flat over a tensor of `index_shape` (as MaxPool's indices output gives them), the same
// coordinates in y (whose shape may be larger); later elements win where indices repeat.
struct MaxUnpoolParams {
  int64_t count = 0;  // elements of x
  Shape index_shape, out_shape;
};
void max_unpool(const MaxUnpoolParams& params, const std::string& node, const float* x, IndexData indices, float* y);

}  // namespace mt
