#include "kernels/cpu/engines/broadcast_loop.h"

namespace mt::cpu {
namespace {

std::vector<int64_t> strides_of(const Shape& shape, const Shape& out) {
  std::vector<int64_t> strides(shape.size(), 0);
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = (shape[d] == 1 && out[d] != 1) ? 0 : stride;
    stride *= shape[d];
  }
  return strides;
}

}  // namespace

BroadcastLoop::BroadcastLoop(const Shape& out, const Shape& a, const Shape& b) {
  const auto sa = strides_of(a, out), sb = strides_of(b, out), so = strides_of(out, out);
  std::vector<Dim> dims;
  for (size_t d = 0; d < out.size(); ++d) append_merged(dims, {out[d], {sa[d], sb[d], so[d]}});
  if (dims.empty()) return;
  inner_ = dims.back();
  dims.pop_back();
  check_loop_depth(dims, "broadcast");
  for (const Dim& dim : dims) rows_ *= static_cast<size_t>(dim.size);
  outer_ = std::move(dims);
}

SelectLoop::SelectLoop(const Shape& out, const Shape& condition, const Shape& x, const Shape& y) {
  const auto sc = strides_of(condition, out), sx = strides_of(x, out), sy = strides_of(y, out),
             so = strides_of(out, out);
  std::vector<Dim> dims;
  for (size_t d = 0; d < out.size(); ++d) append_merged(dims, {out[d], {sc[d], sx[d], sy[d], so[d]}});
  if (dims.empty()) return;
  inner_ = dims.back();
  dims.pop_back();
  check_loop_depth(dims, "where");
  for (const Dim& dim : dims) rows_ *= static_cast<size_t>(dim.size);
  outer_ = std::move(dims);
}

}  // namespace mt::cpu
