// Winograd convolution for 3x3, stride 1, dilation 1, group 1 conv2d with constant weights:
// F(4x4, 3x3) does 4x fewer multiplies than the direct path for 4x the packed weights, F(2x2, 3x3)
// 2.25x fewer for 16/9 the weights.
#pragma once

#include <cstddef>

#include "kernels/cpu/plan/plan_builder.h"

namespace mt::cpu {

// The shape facts the choice depends on (output height and width, channels in and out).
struct WinogradShape {
  size_t out_h, out_w, in_channels, out_channels;
};

// The output tile of the Winograd variant that beats the direct path for a conv of this shape:
// 4 for F(4x4, 3x3), 2 for F(2x2, 3x3), 0 for neither (measured crossover, see winograd_conv.cpp).
size_t winograd_tile(const WinogradShape& shape);

// Whether `node` is a conv2d Winograd can run: 3x3, stride 1, dilation 1, group 1, constant weights.
bool winograd_applies(const Graph& graph, const Node& node);

// The points of F(tile x tile, 3x3): 36 for tile 4, 16 for tile 2.
size_t winograd_points(size_t tile);

// The transformed weights' one packing function (planning, and mt-prepack for the layouts
// cpu_winograd4 and cpu_winograd2; their GEMM forms pack each point with pack_gemm_weights): writes
// U = G g G^T at `point` of F(tile x tile, 3x3) as [m][c] floats into u, from the 3x3 weights w of
// m output and c input channels in OIHW order, or OHWI with `ohwi`.
void winograd_weights(float* u, const float* w, bool ohwi, size_t tile, size_t point, size_t c, size_t m);

// Plans the conv as Winograd F(tile x tile, 3x3), tile 4 or 2.
void plan_conv2d_winograd(NodeContext& context, size_t tile);

}  // namespace mt::cpu
