#include "kernels/vulkan/plan/packed_layout.h"

#include <cstring>

#include "lib/core/error.h"

namespace mt::vulkan {

PackedLayout packed_layout(const Shape& shape) {
  PackedLayout layout;
  layout.dims = shape.empty() ? Shape{1} : shape;
  const size_t rank = layout.dims.size();
  layout.packed_axis = rank >= 2 ? 1 : 0;
  layout.strides.assign(rank, 0);
  int64_t stride = 1;
  for (size_t a = rank; a-- > 0;) {
    layout.strides[a] = stride;
    const int64_t extent = static_cast<int>(a) == layout.packed_axis ? (layout.dims[a] + 3) / 4 : layout.dims[a];
    stride *= extent;
  }
  layout.texels = stride;
  return layout;
}

bool same_placement(const Shape& a, const Shape& b) {
  // Elements before the packed axis, along it, and after it must agree.
  auto split = [](const Shape& shape) {
    const PackedLayout layout = packed_layout(shape);
    const size_t p = static_cast<size_t>(layout.packed_axis);
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < p; ++i) outer *= layout.dims[i];
    for (size_t i = p + 1; i < layout.dims.size(); ++i) inner *= layout.dims[i];
    return std::array<int64_t, 3>{outer, layout.dims[p], inner};
  };
  const auto sa = split(a), sb = split(b);
  // With a packed extent of 1 everything is one lane per texel, so only the total matters.
  if (sa[1] == 1 && sb[1] == 1) return sa[0] * sa[2] == sb[0] * sb[2];
  return sa == sb;
}

void View::append_to(std::vector<uint32_t>& words) const {
  auto push = [&](int32_t v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    words.push_back(u);
  };
  push(rank);
  push(packed);
  for (int32_t d : dims) push(d);
  for (int32_t s : strides) push(s);
}

View view_of(const PackedLayout& layout) {
  if (layout.dims.size() > kMaxRank) fail(ExitCode::unsupported, "vulkan: rank {} tensors are not supported (at most {})", layout.dims.size(), kMaxRank);
  View view;
  view.rank = static_cast<int>(layout.dims.size());
  view.packed = layout.packed_axis;
  for (size_t a = 0; a < layout.dims.size(); ++a) {
    view.dims[a] = static_cast<int32_t>(layout.dims[a]);
    view.strides[a] = static_cast<int32_t>(layout.strides[a]);
  }
  return view;
}

View aligned(const View& view, int rank) {
  View out = view;
  while (out.rank < rank) out = with_unit_axis(out, 0);
  return out;
}

View with_unit_axis(const View& view, int position) {
  if (view.rank >= kMaxRank) fail(ExitCode::unsupported, "vulkan: rank {} tensors are not supported (at most {})", view.rank + 1, kMaxRank);
  View out;
  out.rank = view.rank + 1;
  out.packed = view.packed >= position ? view.packed + 1 : view.packed;
  for (int a = 0, s = 0; a < out.rank; ++a) {
    if (a == position) {
      out.dims[a] = 1;
      out.strides[a] = 0;
    } else {
      out.dims[a] = view.dims[s];
      out.strides[a] = view.strides[s];
      ++s;
    }
  }
  return out;
}

}  // namespace mt::vulkan
