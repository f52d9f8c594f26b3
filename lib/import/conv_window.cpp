#include "lib/import/conv_window.h"

#include <algorithm>

namespace mt::onnx_import {

void check_range(const OnnxNode& node, const char* name, const std::vector<int64_t>& values, int64_t low,
                 int64_t high) {
  for (int64_t v : values)
    if (v < low || v > high) node.invalid("{} value {} is outside [{}, {}]", name, v, low, high);
}

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

std::vector<int64_t> axis_auto_pads(const OnnxNode& node, const std::string& mode, int64_t in, int64_t kernel,
                                    int64_t stride, int64_t dilation) {
  Window w{.kernel = {1, kernel}, .strides = {1, stride}, .dilations = {1, dilation}, .pads = {}};
  const auto pads = auto_pads(node, mode, {1, 1, 1, in}, w);
  return {pads[1], pads[3]};
}

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

std::vector<int64_t> output_shape_attr(const OnnxNode& node, size_t spatial) {
  std::vector<int64_t> output_shape = node.attr_ints("output_shape");
  check_range(node, "output_shape", output_shape, 0, kMaxElements);
  if (output_shape.size() == spatial + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != spatial)
    node.invalid("output_shape must have {} values, got {}", spatial, output_shape.size());
  return output_shape;
}

}  // namespace mt::onnx_import
