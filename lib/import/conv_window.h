// Window arithmetic shared by the convolution and pooling rules (translate_conv.cpp for 1-D and 2-D
// windows, translate_conv3d.cpp for 3-D ones): bounds, auto_pad and ConvTranspose's output_shape.
#pragma once

#include <string>
#include <vector>

#include "lib/import/import_context.h"

namespace mt::onnx_import {

// A window in 2-D form: pads are {top, left, bottom, right}.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
};


// Window sizes, strides and dilations beyond this are no real network's, and bounding them keeps
// the pad arithmetic below far from overflow whatever a file says.
constexpr int64_t kMaxWindow = int64_t{1} << 20;

// Fails (invalid_input naming the node) unless every value is in [low, high].
void check_range(const OnnxNode& node, const char* name, const std::vector<int64_t>& values, int64_t low,
                 int64_t high);

// Explicit 2-D pads for auto_pad SAME_UPPER/SAME_LOWER (output = ceil(input / stride)) and VALID, on
// the 2-D input shape `input`.
std::vector<int64_t> auto_pads(const OnnxNode& node, const std::string& mode, const Shape& input, const Window& w);

// The same for one axis of size `in`, as {begin, end}.
std::vector<int64_t> axis_auto_pads(const OnnxNode& node, const std::string& mode, int64_t in, int64_t kernel,
                                    int64_t stride, int64_t dilation);

// ConvTranspose's pads (all begins, then all ends) and output_padding over the spatial axes of sizes
// `in`, from output_shape or auto_pad as the ONNX operator documentation gives them: total padding
// split in half, the odd element at the end for SAME_UPPER, else at the start; an output_shape
// larger than the unpadded output grows it at the end (output_padding).
void transpose_pads(const OnnxNode& node, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                    const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                    std::vector<int64_t> output_shape, std::vector<int64_t>& pads, std::vector<int64_t>& output_padding);

// ConvTranspose's output_shape with `spatial` values (the N and C entries dropped when given), or empty.
std::vector<int64_t> output_shape_attr(const OnnxNode& node, size_t spatial);

// The rules for rank-5 inputs (3-D windows), in translate_conv3d.cpp: Conv, ConvTranspose, and
// MaxPool or AveragePool (`mt_op` max_pool2d or avg_pool2d); `x` is the node's input 0.
void conv_3d(ImportContext& ctx, const OnnxNode& node, const TensorInfo& x);
void conv_transpose_3d(ImportContext& ctx, const OnnxNode& node, const TensorInfo& x);
void pool_3d(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op, const TensorInfo& x);

}  // namespace mt::onnx_import
