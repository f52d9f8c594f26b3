// The geometry of a convolution whose weights are computed at run time (conv_gemm.cpp for conv2d,
// conv_transpose_direct.cpp for conv_transpose2d): NHWC sizes, window, padding and the fused clamp,
// read from the node once at planning.
#pragma once

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/plan_builder.h"

namespace mt::cpu {

struct RuntimeConvGeometry {
  size_t n, h, w, c, m, out_h, out_w, groups;  // m: output channels
  int64_t kh, kw, sh, sw, dh, dw, pt, pl;
  float low, high;
  size_t group_in() const { return c / groups; }
  size_t group_out() const { return m / groups; }
  size_t depth() const { return static_cast<size_t>(kh * kw) * group_in(); }  // im2col row length
};

// The kernel window is dims 2 and 3 of the weights in both ops' layouts.
inline RuntimeConvGeometry runtime_conv_geometry(NodeContext& c) {
  const Node& node = c.node();
  const Shape& xs = c.input_info(0).shape;
  const Shape& ws = c.input_info(1).shape;
  const Shape& ys = c.output_info(0).shape;
  const auto& strides = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  const auto& dilations = attr_ints(node, "dilations");
  return {static_cast<size_t>(xs[0]), static_cast<size_t>(xs[2]), static_cast<size_t>(xs[3]),
          static_cast<size_t>(xs[1]), static_cast<size_t>(ys[1]), static_cast<size_t>(ys[2]),
          static_cast<size_t>(ys[3]), static_cast<size_t>(attr_int(node, "group")), ws[2], ws[3],
          strides[0], strides[1], dilations[0], dilations[1], pads[0], pads[1],
          attr_f32(node, "act_min"), attr_f32(node, "act_max")};
}

}  // namespace mt::cpu
