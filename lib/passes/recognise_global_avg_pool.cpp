// recognise_global_avg_pool: reduce_mean of a float32 [N,C,H,W] tensor over exactly its two
// spatial axes becomes global_avg_pool ([N,C,1,1]), followed by a reshape to [N,C] when the mean
// drops the reduced axes (keepdims 0). torchvision heads write x.mean([2, 3]) (ShuffleNetV2);
// global_avg_pool has int8 kernels and mt-quantize quantizes it, reduce_mean has neither, so the
// int8 model would otherwise leave int8 for the mean alone.
#include "lib/ops/registry.h"
#include "lib/passes/passes.h"
#include "lib/passes/patterns.h"

namespace mt::passes {
namespace {

// True when `node` is a reduce_mean of a plain float32 4-D tensor over axes {2, 3} and no other
// (either sign, any order). Empty spatial axes are left alone: global_avg_pool refuses them.
bool is_spatial_mean(const Graph& graph, const Node& node) {
  if (node.op != "reduce_mean" || node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  const TensorInfo& x = graph.tensor(node.inputs[0]);
  if (x.dtype != DType::f32 || x.quant || !x.layout.empty() || x.shape.size() != 4) return false;
  if (x.shape[2] < 1 || x.shape[3] < 1) return false;
  std::vector<bool> reduced(4, false);
  for (int64_t axis : attr_ints(node, "axes")) {  // empty axes reduce every axis: no match
    const auto a = normalize_axis(axis, 4);
    if (!a || reduced[static_cast<size_t>(*a)]) return false;
    reduced[static_cast<size_t>(*a)] = true;
  }
  return reduced == std::vector<bool>{false, false, true, true};
}

}  // namespace

void recognise_global_avg_pool(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex&, size_t i) -> std::optional<size_t> {
    if (!is_spatial_mean(g, g.nodes[i])) return std::nullopt;
    const Node mean = g.nodes[i];
    if (attr_int(mean, "keepdims") != 0) {
      report.record("recognised global_avg_pool", {mean.name}, {mean.name});
      return 1 + replace_nodes(g, {i}, replacement_node(mean, "global_avg_pool", mean.inputs));
    }
    // The pool keeps the mean's node name (so --keep-fp32 NAME still finds it); the reshape writes
    // the mean's output tensor, so its readers and the graph outputs are unchanged.
    const Shape& x = g.tensor(mean.inputs[0]).shape;
    const std::string pooled = unique_tensor_name(g, mean.outputs[0] + "/pooled");
    g.add_tensor(TensorInfo{.name = pooled, .dtype = DType::f32, .shape = {x[0], x[1], 1, 1}});
    Node reshape{.name = unique_node_name(g, mean.name + "/reshape"),
                 .op = "reshape",
                 .inputs = {pooled},
                 .outputs = mean.outputs,
                 .attrs = {{"shape", Shape{x[0], x[1]}}}};
    report.record("recognised global_avg_pool (+ reshape for keepdims 0)", {mean.name}, {mean.name, reshape.name});
    g.nodes[i] = Node{.name = mean.name, .op = "global_avg_pool", .inputs = mean.inputs, .outputs = {pooled}};
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1, std::move(reshape));
    return i + 2;
  });
}

}  // namespace mt::passes
