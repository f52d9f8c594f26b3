// Physical layouts of tensors inside the cpu backend: a permutation saying which logical dimension
// is stored at each physical position (identity = row-major NCHW, {0,2,3,1} = NHWC).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/ir/shape.h"

namespace mt::cpu {

// layout[k] = the logical dimension stored at physical position k (outermost first).
using Layout = std::vector<int>;

Layout identity_layout(size_t rank);
Layout nhwc_layout();  // for rank-4 tensors declared NCHW
bool is_identity(const Layout& layout);

// The dimensions in memory order.
Shape physical_shape(const Shape& shape, const Layout& layout);
// Physical position of a logical axis.
int physical_axis(const Layout& layout, int logical_axis);

// True when both layouts put the elements of `shape` at the same addresses: their orders agree
// once dimensions of size 1 are ignored (an NCHW tensor with H = W = 1 is also NHWC).
bool same_memory_order(const Shape& shape, const Layout& a, const Layout& b);

// The simplest layout with the same memory order as `layout` for `shape`: identity when
// possible, else NHWC when possible, else `layout` itself.
Layout canonical_layout(const Shape& shape, const Layout& layout);

// A layout of a tensor whose shape is the trailing `rank` dims of a broadcast result laid out as
// `layout` (numpy alignment): the order in which those dims appear in `layout`.
Layout trailing_layout(const Layout& layout, size_t rank);
// The inverse: a rank-`rank` layout for a tensor laid out as `layout` (of lower rank) once leading
// dimensions of size 1 are added (the new dims go first in memory).
Layout padded_layout(const Layout& layout, size_t rank);

// The layout of a reshape's output that keeps the input's bytes where they are, if one exists
// (the reshape then costs nothing); nullopt when the data must be reordered first.
std::optional<Layout> reshape_layout(const Shape& in_shape, const Layout& in_layout, const Shape& out_shape);

// The layout of transpose(x, perm)'s output that keeps x's bytes where they are.
Layout transpose_layout(const Layout& in_layout, const std::vector<int>& perm);

std::string layout_str(const Layout& layout);

}  // namespace mt::cpu
