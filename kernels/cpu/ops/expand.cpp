// expand: numpy broadcast of X to a shape, in X's layout (new leading dims go outermost), as a
// broadcast copy whose innermost run is contiguous or a repeated element.
#include <cstdint>

#include "kernels/cpu/engines/broadcast_loop.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"

namespace mt::cpu {
namespace {

template <typename T>
void expand(const BroadcastLoop& loop, const void* in, void* out, ThreadPool* pool) {
  const auto* x = static_cast<const T*>(in);
  loop.run(x, x, static_cast<T*>(out), [](T a, T) { return a; }, pool);
}

}  // namespace

std::optional<std::string> check_expand(const Graph&, const Node&) { return std::nullopt; }

void plan_expand(NodeContext& c) {
  const Value x = c.input(0);
  const Shape& out_shape = c.output_info(0).shape;
  const Layout layout = padded_layout(x.layout, out_shape.size());
  Shape padded(out_shape.size() - x.shape.size(), 1);
  padded.insert(padded.end(), x.shape.begin(), x.shape.end());
  const Shape in_physical = physical_shape(padded, layout);
  const BroadcastLoop loop(physical_shape(out_shape, layout), in_physical, in_physical);
  const Value y = c.output(0, layout);
  using Fn = void (*)(const BroadcastLoop&, const void*, void*, ThreadPool*);
  Fn fn = nullptr;
  switch (dtype_size(x.dtype)) {
    case 1: fn = expand<uint8_t>; break;
    case 2: fn = expand<uint16_t>; break;
    case 4: fn = expand<uint32_t>; break;
    default: fn = expand<uint64_t>; break;
  }
  c.add_kernel({x, y}, [loop, fn](Pointers p, ThreadPool* pool) { fn(loop, p[0], p[1], pool); });
}

}  // namespace mt::cpu
