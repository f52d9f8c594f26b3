// Plan-time fusion of ShuffleNet's channel shuffle into the concat before it: a channel concat of
// NCHW tensors whose only reader is reshape [N, G, C/G, H, W] -> transpose (0, 2, 1, 3, 4) ->
// reshape [N, C, H, W] (each the only reader of the one before) runs as one pass that writes the
// shuffled tensor (engines/channel_shuffle.h); when every reader of the shuffled tensor is a slice
// of a channel range (the next unit's two halves), the pass writes those slices instead. The
// concat's step does all of it: the reshapes, the transpose and the slices plan no step (profiles
// show them with no time). Anything else plans node by node as before, and so does every model
// with PlanOptions::conv_fusion off (MT_CPU_CONV_FUSION=0).
#include <algorithm>

#include "kernels/cpu/engines/channel_shuffle.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/op_util.h"
#include "lib/ops/slice_params.h"

namespace mt::cpu {
namespace {

// The node that alone reads `tensor` if it is of type `op`.
std::optional<size_t> sole_reader(const NodeContext& c, const std::string& tensor, std::string_view op) {
  const std::optional<size_t> next = c.sole_consumer_of(tensor);
  if (!next || c.graph().nodes[*next].op != op) return std::nullopt;
  return next;
}

// The channels [first, end) that slice node `node` takes from a [N, C, H, W] tensor, if it takes
// only a non-empty range of them, in order.
std::optional<std::pair<size_t, size_t>> channel_range(const Node& node, const Shape& shape) {
  const std::vector<SliceAxis> axes = resolve_slice(node, shape);
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k == 1) continue;
    if (axes[k].start != 0 || axes[k].step != 1 || axes[k].count != shape[k]) return std::nullopt;
  }
  if (axes[1].step != 1 || axes[1].count <= 0) return std::nullopt;
  return std::pair{static_cast<size_t>(axes[1].start), static_cast<size_t>(axes[1].start + axes[1].count)};
}

}  // namespace

std::optional<ConcatShuffle> fuse_concat_shuffle(NodeContext& planning, size_t concat_node) {
  if (!planning.conv_fusion()) return std::nullopt;
  NodeContext c = planning.context_of(concat_node);
  const Graph& graph = c.graph();
  const TensorInfo& concat = c.output_info(0);
  const Shape& shape = concat.shape;
  if (c.node().op != "concat" || shape.size() != 4 || numel(shape) == 0 ||
      axis_of(c.node(), attr_int(c.node(), "axis"), 4) != 1)
    return std::nullopt;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (!c.has_input(i) || c.input_info(i).shape.size() != 4 || c.input_info(i).shape[1] == 0 ||
        !c.available(c.node().inputs[i]))
      return std::nullopt;
  // reshape [N, G, C/G, H, W] -> transpose (0, 2, 1, 3, 4) -> reshape [N, C, H, W].
  const std::optional<size_t> split = sole_reader(c, c.node().outputs[0], "reshape");
  if (!split) return std::nullopt;
  const std::string& grouped = graph.nodes[*split].outputs[0];
  const Shape& g_shape = graph.tensor(grouped).shape;
  if (g_shape.size() != 5 || g_shape[0] != shape[0] || g_shape[3] != shape[2] || g_shape[4] != shape[3] ||
      g_shape[1] * g_shape[2] != shape[1] || static_cast<size_t>(g_shape[1]) > ChannelShuffle::kMaxGroups)
    return std::nullopt;
  const std::optional<size_t> swap = sole_reader(c, grouped, "transpose");
  if (!swap || attr_int_list(graph.nodes[*swap], "perm") != std::vector<int>{0, 2, 1, 3, 4}) return std::nullopt;
  const std::optional<size_t> merge = sole_reader(c, graph.nodes[*swap].outputs[0], "reshape");
  if (!merge) return std::nullopt;
  const std::string& shuffled = graph.nodes[*merge].outputs[0];
  if (graph.tensor(shuffled).shape != shape) return std::nullopt;
  // The readers of the shuffled tensor: all slices of channel ranges, or it is stored whole.
  std::vector<size_t> slices;
  std::vector<std::pair<size_t, size_t>> ranges;
  const bool output = std::find(graph.outputs.begin(), graph.outputs.end(), shuffled) != graph.outputs.end();
  for (size_t reader : c.consumers_of(shuffled)) {
    const Node& node = graph.nodes[reader];
    std::optional<std::pair<size_t, size_t>> range;
    if (node.op == "slice" && node.inputs[0] == shuffled && !check_slice(graph, node))
      range = channel_range(node, shape);
    if (output || !range || std::find(slices.begin(), slices.end(), reader) != slices.end()) {
      slices.clear();
      ranges.clear();
      break;
    }
    slices.push_back(reader);
    ranges.push_back(*range);
  }
  // The same quantization (or none) throughout: the concat only copies, nothing is requantized.
  std::vector<std::string> chain{grouped, graph.nodes[*swap].outputs[0], shuffled};
  for (size_t i = 0; i < c.num_inputs(); ++i) chain.push_back(c.node().inputs[i]);
  for (size_t slice : slices) chain.push_back(graph.nodes[slice].outputs[0]);
  for (const std::string& name : chain)
    if (graph.tensor(name).quant != concat.quant) return std::nullopt;
  if (ranges.empty()) ranges.push_back({0, static_cast<size_t>(shape[1])});

  ConcatShuffle fused;
  std::vector<size_t> channels;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    fused.values.push_back(c.input(i, nhwc_layout()));
    channels.push_back(static_cast<size_t>(c.input_info(i).shape[1]));
  }
  if (concat_node != planning.node_index()) c.fuse_through(concat_node);
  c.fuse_through(*split);
  c.fuse_through(*swap);
  if (slices.empty()) {
    fused.values.push_back(c.fused_output(*merge, 0, nhwc_layout()));
  } else {
    c.fuse_through(*merge);
    for (size_t slice : slices) fused.values.push_back(c.fused_output(slice, 0, nhwc_layout()));
  }
  const auto pixels = static_cast<size_t>(shape[0] * shape[2] * shape[3]);
  const bool avx512 = c.packed_gemm() && channel_shuffle_avx512_supported();
  fused.shuffle =
      ChannelShuffle(channels, static_cast<size_t>(g_shape[1]), ranges, pixels, dtype_size(concat.dtype), avx512);
  return fused;
}

FusedShuffle fuse_shuffle_after(NodeContext& planning, const std::string& tensor, std::vector<Value>& values) {
  FusedShuffle fused{.pass = std::nullopt, .first = values.size()};
  const std::optional<size_t> concat = planning.sole_consumer_of(tensor);
  if (!concat) return fused;
  std::optional<ConcatShuffle> shuffle = fuse_concat_shuffle(planning, *concat);
  if (!shuffle) return fused;
  values.insert(values.end(), shuffle->values.begin(), shuffle->values.end());
  fused.pass = std::move(shuffle->shuffle);
  return fused;
}

PixelRangeTail shuffle_tail(const ShuffleTail& tail) {
  if (tail.pass == nullptr) return {};
  return {.fn =
              [](const void* raw, size_t begin, size_t end) {
                const auto* t = static_cast<const ShuffleTail*>(raw);
                t->pass->run_pixels(t->pointers, begin, end);
              },
          .context = &tail};
}

bool plan_concat_shuffle(NodeContext& c) {
  std::optional<ConcatShuffle> fused = fuse_concat_shuffle(c, c.node_index());
  if (!fused) return false;
  c.add_kernel(fused->values,
               [shuffle = std::move(fused->shuffle)](Pointers p, ThreadPool* pool) { shuffle.run(p, pool); });
  return true;
}

}  // namespace mt::cpu
