// Shape ops: views with no copy where the packed placement allows (reshape and friends), otherwise
// shaders/relayout.comp (reshape, transpose, slice, expand, pad, concat and split pieces), and gather
// with constant indices (gather.comp).
#include <numeric>

#include "kernels/vulkan/ops/ops.h"
#include "lib/ops/registry.h"
#include "lib/ops/slice_params.h"

namespace mt::vulkan {
namespace {

using Coords = std::array<int64_t, kMaxRank>;

// One relayout dispatch: for every coordinate I of `iteration` (the output's rank), output
// obase + I; input base[j] + step[j] * I[src[j]] (src[j] < 0: base[j]), or with `reshape` the
// element of the same row-major index.
struct Relayout {
  Shape iteration;
  Coords obase{}, base{}, step{1, 1, 1, 1, 1, 1}, src{-1, -1, -1, -1, -1, -1};
  bool reshape = false;
  int pad_mode = 0;  // 0 constant, 1 edge, 2 reflect
  double value = 0;
};

void relayout(NodeContext& ctx, const Tensor& x, const Tensor& y, const Relayout& r) {
  const int64_t count = numel(r.iteration);
  if (count == 0) return;
  Params params;
  params.i(count).i(r.reshape ? 1 : 0).i(r.pad_mode).f(r.value);
  params.view(view_of(packed_layout(r.iteration))).view(y.view()).view(x.view());
  for (const Coords* list : {&r.obase, &r.base, &r.step, &r.src})
    for (int64_t v : *list) params.i(v);
  ctx.dispatch("relayout", {64, 1, 1}, {}, {NodeContext::read(x), NodeContext::write(y)}, params, linear_groups(count));
}

// Identity mapping of the first `rank` axes.
Relayout identity(const Shape& iteration) {
  Relayout r;
  r.iteration = iteration.empty() ? Shape{1} : iteration;
  for (size_t j = 0; j < r.iteration.size(); ++j) r.src[j] = static_cast<int64_t>(j);
  return r;
}

}  // namespace

std::optional<std::string> check_reshape(const Graph&, const Node&) { return std::nullopt; }

void plan_reshape(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& out = ctx.output_info(0).shape;
  if (same_placement(ctx.input_info(0).shape, out)) {
    ctx.alias_output(0, x);
    return;
  }
  const Tensor y = ctx.output(0);
  Relayout r = identity(out);
  r.reshape = true;
  relayout(ctx, x, y, r);
}

std::optional<std::string> check_transpose(const Graph&, const Node&) { return std::nullopt; }

void plan_transpose(NodeContext& ctx) {
  const Shape& xs = ctx.input_info(0).shape;
  std::vector<int64_t> perm = attr_ints(ctx.node(), "perm");
  if (perm.empty()) {
    perm.resize(xs.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  Relayout r = identity(ctx.output_info(0).shape);
  // Output axis k reads input axis perm[k].
  for (size_t k = 0; k < perm.size(); ++k) r.src[static_cast<size_t>(perm[k])] = static_cast<int64_t>(k);
  relayout(ctx, x, y, r);
}

std::optional<std::string> check_slice(const Graph&, const Node&) { return std::nullopt; }

void plan_slice(NodeContext& ctx) {
  const auto axes = resolve_slice(ctx.node(), ctx.input_info(0).shape);
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  Relayout r = identity(ctx.output_info(0).shape);
  for (size_t j = 0; j < axes.size(); ++j) {
    r.base[j] = axes[j].start;
    r.step[j] = axes[j].step;
  }
  relayout(ctx, x, y, r);
}

std::optional<std::string> check_concat(const Graph&, const Node&) { return std::nullopt; }

void plan_concat(NodeContext& ctx) {
  const Shape& out = ctx.output_info(0).shape;
  const auto axis = static_cast<size_t>(*normalize_axis(attr_int(ctx.node(), "axis"), out.size()));
  const Tensor y = ctx.output(0);
  const bool int8 = is_int8_node(ctx.graph(), ctx.node());
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.node().inputs.size(); ++i) {
    const Shape& piece = ctx.input_info(i).shape;
    Relayout r = identity(piece);
    r.obase[axis] = offset;
    relayout(ctx, int8 ? int8_input_with_output_parameters(ctx, i) : ctx.input(i), y, r);
    offset += piece[axis];
  }
}

std::optional<std::string> check_split(const Graph&, const Node&) { return std::nullopt; }

void plan_split(NodeContext& ctx) {
  const Shape& xs = ctx.input_info(0).shape;
  const auto axis = static_cast<size_t>(*normalize_axis(attr_int(ctx.node(), "axis"), xs.size()));
  const Tensor& x = ctx.input(0);
  int64_t offset = 0;
  for (size_t o = 0; o < ctx.node().outputs.size(); ++o) {
    const Shape& piece = ctx.output_info(o).shape;
    Relayout r = identity(piece);
    r.base[axis] = offset;
    relayout(ctx, x, ctx.output(o), r);
    offset += piece[axis];
  }
}

std::optional<std::string> check_expand(const Graph&, const Node&) { return std::nullopt; }

void plan_expand(NodeContext& ctx) {
  const Shape& xs = ctx.input_info(0).shape;
  const Shape& out = ctx.output_info(0).shape;
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  Relayout r = identity(out);
  // Input axis j is output axis j + (rank difference); size-1 input axes read index 0.
  const size_t shift = std::max<size_t>(out.size(), 1) - std::max<size_t>(xs.size(), 1);
  r.src.fill(-1);
  for (size_t j = 0; j < std::max<size_t>(xs.size(), 1); ++j) {
    r.src[j] = static_cast<int64_t>(j + shift);
    r.step[j] = j < xs.size() && xs[j] == 1 ? 0 : 1;
  }
  relayout(ctx, x, y, r);
}

std::optional<std::string> check_pad(const Graph&, const Node&) { return std::nullopt; }

void plan_pad(NodeContext& ctx) {
  const Node& node = ctx.node();
  const Shape& xs = ctx.input_info(0).shape;
  const auto& pads = attr_ints(node, "pads");
  const std::string& mode = attr_string(node, "mode");
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  Relayout r = identity(ctx.output_info(0).shape);
  for (size_t j = 0; j < xs.size(); ++j) r.base[j] = -pads[j];
  r.pad_mode = mode == "edge" ? 1 : mode == "reflect" ? 2 : 0;
  r.value = attr_float(node, "value");
  relayout(ctx, x, y, r);
}

std::optional<std::string> check_gather(const Graph& graph, const Node& node) {
  return require_constant(graph, node, 1, "indices");
}

void plan_gather(NodeContext& ctx) {
  const Shape& xs = ctx.input_info(0).shape;
  const TensorInfo& indices = ctx.input_info(1);
  const auto axis = static_cast<size_t>(*normalize_axis(attr_int(ctx.node(), "axis"), xs.size()));
  const int64_t dim = xs[axis];
  std::vector<int32_t> table;
  for (int64_t i = 0; i < indices.numel(); ++i) {
    int64_t index = indices.dtype == DType::i64 ? indices.data.as<int64_t>()[i] : indices.data.as<int32_t>()[i];
    if (index < -dim || index >= dim)
      invalid_input("node '{}' (gather): index {} out of range for axis {} of length {}", ctx.node().name, index, axis, dim);
    table.push_back(static_cast<int32_t>(index < 0 ? index + dim : index));
  }
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < axis; ++a) outer *= xs[a];
  for (size_t a = axis + 1; a < xs.size(); ++a) inner *= xs[a];
  const Tensor& x = ctx.input(0);
  const Tensor y = ctx.output(0);
  const int64_t count = numel(y.layout.dims);
  if (count == 0) return;
  const int index_buffer = ctx.weights_words(table);
  ctx.dispatch("gather", {64, 1, 1}, {}, {NodeContext::read(x), NodeContext::write(y), NodeContext::read(index_buffer)},
               Params().i(count).i(outer).i(static_cast<int64_t>(table.size())).i(inner).i(dim).view(y.view()).view(x.view()),
               linear_groups(count));
}

}  // namespace mt::vulkan
