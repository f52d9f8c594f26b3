// resize of the H and W axes of NCHW tensors in every mode and coordinate transform: the taps of each
// output row and column are computed at planning by the same code as the reference
// (lib/ops/resize_coords.h), the shader only weighs texels (shaders/resize.comp).
#include <fmt/format.h>

#include <cstring>

#include "kernels/vulkan/ops/ops.h"
#include "lib/core/error.h"
#include "lib/ops/resize_coords.h"

namespace mt::vulkan {

std::optional<std::string> check_resize(const Graph& graph, const Node& node) {
  const Shape& xs = graph.tensor(node.inputs.at(0)).shape;
  if (xs.size() != 4) return fmt::format("rank {} not supported (NCHW only)", xs.size());
  ResizeParams params;
  try {
    params = read_resize(node, xs);
  } catch (const Error& e) {
    return e.what();
  }
  if (params.resizes_axis(0, xs[0]) || params.resizes_axis(1, xs[1])) return "resizing the batch or channel axis not supported";
  return std::nullopt;
}

void plan_resize(NodeContext& ctx) {
  const Shape& xs = ctx.input_info(0).shape;
  const Shape& ys = ctx.output_info(0).shape;
  const ResizeParams params = read_resize(ctx.node(), xs);
  std::vector<int32_t> taps;
  for (size_t axis : {size_t{2}, size_t{3}}) {
    const bool resized = params.resizes_axis(axis, xs[axis]);
    for (int64_t o = 0; o < ys[axis]; ++o) {
      ResizeTaps t;
      if (resized) {
        t = resize_taps(params, axis, xs[axis], o);
      } else {
        t.count = 1;
        t.index[0] = o;
        t.weight[0] = 1.0;
      }
      taps.push_back(t.count);
      for (int i = 0; i < 4; ++i) taps.push_back(static_cast<int32_t>(i < t.count ? t.index[static_cast<size_t>(i)] : 0));
      for (int i = 0; i < 4; ++i) {
        const float w = i < t.count ? static_cast<float>(t.weight[static_cast<size_t>(i)]) : 0.0f;
        int32_t bits;
        std::memcpy(&bits, &w, 4);
        taps.push_back(bits);
      }
    }
  }
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int64_t planes = xs[0] * ((xs[1] + 3) / 4);
  ctx.dispatch("resize", {8, 8, 1}, {}, {NodeContext::read(x), NodeContext::write(y), NodeContext::read(ctx.weights_words(taps))},
               Params().i(planes).i(xs[2]).i(xs[3]).i(ys[2]).i(ys[3]),
               {static_cast<uint32_t>((ys[3] + 7) / 8), static_cast<uint32_t>((ys[2] + 7) / 8), static_cast<uint32_t>(planes)});
}

}  // namespace mt::vulkan
