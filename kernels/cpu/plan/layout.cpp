#include "kernels/cpu/plan/layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace mt::cpu {
namespace {

// Logical dims of size > 1 in memory order.
std::vector<int> nontrivial_order(const Shape& shape, const Layout& layout) {
  std::vector<int> order;
  for (int dim : layout)
    if (shape[dim] != 1) order.push_back(dim);
  return order;
}

}  // namespace

Layout identity_layout(size_t rank) {
  Layout layout(rank);
  std::iota(layout.begin(), layout.end(), 0);
  return layout;
}

Layout nhwc_layout() { return {0, 2, 3, 1}; }

bool is_identity(const Layout& layout) {
  for (size_t i = 0; i < layout.size(); ++i)
    if (layout[i] != static_cast<int>(i)) return false;
  return true;
}

Shape physical_shape(const Shape& shape, const Layout& layout) {
  Shape result(layout.size());
  for (size_t k = 0; k < layout.size(); ++k) result[k] = shape[layout[k]];
  return result;
}

int physical_axis(const Layout& layout, int logical_axis) {
  return static_cast<int>(std::find(layout.begin(), layout.end(), logical_axis) - layout.begin());
}

bool same_memory_order(const Shape& shape, const Layout& a, const Layout& b) {
  if (a == b) return true;
  return nontrivial_order(shape, a) == nontrivial_order(shape, b);
}

Layout canonical_layout(const Shape& shape, const Layout& layout) {
  Layout identity = identity_layout(shape.size());
  if (same_memory_order(shape, layout, identity)) return identity;
  if (shape.size() == 4 && same_memory_order(shape, layout, nhwc_layout())) return nhwc_layout();
  return layout;
}

Layout trailing_layout(const Layout& layout, size_t rank) {
  const int offset = static_cast<int>(layout.size() - rank);
  Layout result;
  for (int dim : layout)
    if (dim >= offset) result.push_back(dim - offset);
  return result;
}

Layout padded_layout(const Layout& layout, size_t rank) {
  const int offset = static_cast<int>(rank - layout.size());
  Layout result = identity_layout(offset);
  for (int dim : layout) result.push_back(dim + offset);
  return result;
}

std::optional<Layout> reshape_layout(const Shape& in_shape, const Layout& in_layout, const Shape& out_shape) {
  if (numel(out_shape) == 0) return identity_layout(out_shape.size());
  std::vector<int> in_dims, out_dims;  // logical dims of size > 1
  for (size_t i = 0; i < in_shape.size(); ++i)
    if (in_shape[i] != 1) in_dims.push_back(static_cast<int>(i));
  for (size_t i = 0; i < out_shape.size(); ++i)
    if (out_shape[i] != 1) out_dims.push_back(static_cast<int>(i));

  // Split both dim lists into the smallest groups with equal products: a reshape only merges or
  // splits dims within a group.
  struct Group {
    std::vector<int> in, out;
  };
  std::vector<Group> groups;
  std::vector<int> group_of(in_shape.size(), -1), index_in_group(in_shape.size(), -1);
  size_t i = 0, j = 0;
  while (i < in_dims.size() || j < out_dims.size()) {
    Group group;
    int64_t in_product = 1, out_product = 1;
    do {
      if (in_product <= out_product && i < in_dims.size()) {
        in_product *= in_shape[in_dims[i]];
        group.in.push_back(in_dims[i++]);
      } else if (j < out_dims.size()) {
        out_product *= out_shape[out_dims[j]];
        group.out.push_back(out_dims[j++]);
      } else {
        return std::nullopt;  // element counts disagree: not a reshape
      }
    } while (in_product != out_product);
    for (size_t k = 0; k < group.in.size(); ++k) {
      group_of[group.in[k]] = static_cast<int>(groups.size());
      index_in_group[group.in[k]] = static_cast<int>(k);
    }
    groups.push_back(std::move(group));
  }

  // Each group's input dims must sit together and in logical order in memory.
  std::vector<int> out_order;
  const std::vector<int> memory = nontrivial_order(in_shape, in_layout);
  for (size_t k = 0; k < memory.size();) {
    const Group& group = groups[group_of[memory[k]]];
    for (size_t m = 0; m < group.in.size(); ++m, ++k)
      if (k >= memory.size() || memory[k] != group.in[m]) return std::nullopt;
    out_order.insert(out_order.end(), group.out.begin(), group.out.end());
  }

  Layout identity = identity_layout(out_shape.size());
  if (nontrivial_order(out_shape, identity) == out_order) return identity;
  if (out_shape.size() == 4 && nontrivial_order(out_shape, nhwc_layout()) == out_order) return nhwc_layout();
  Layout result;
  for (size_t d = 0; d < out_shape.size(); ++d)
    if (out_shape[d] == 1) result.push_back(static_cast<int>(d));
  result.insert(result.end(), out_order.begin(), out_order.end());
  return result;
}

Layout transpose_layout(const Layout& in_layout, const std::vector<int>& perm) {
  std::vector<int> inverse(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) inverse[perm[j]] = static_cast<int>(j);
  Layout result(in_layout.size());
  for (size_t k = 0; k < in_layout.size(); ++k) result[k] = inverse[in_layout[k]];
  return result;
}

std::string layout_str(const Layout& layout) { return fmt::format("[{}]", fmt::join(layout, ",")); }

}  // namespace mt::cpu
