// fold_constants: evaluates nodes whose inputs are all constant with the reference kernels and
// turns their outputs into constants (same tensor names), so nothing computes them at run time.
// The evaluator and its size limit are the importer's (lib/ops/eval/evaluate.h).
#include "lib/ops/eval/evaluate.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

bool plain(const TensorInfo& info) { return !info.quant && info.layout.empty(); }

// Whether folding `node` is allowed: constant plain inputs, outputs that are not graph outputs,
// and the evaluator's size limit (an expand of a scalar to a feature map stays a node).
bool foldable(const Graph& graph, const GraphIndex& index, const Node& node) {
  int64_t input_elements = 0;
  size_t inputs = 0;
  for (const auto& in : node.inputs) {
    if (in.empty()) continue;
    const TensorInfo& info = graph.tensor(in);
    if (!info.is_constant() || !plain(info)) return false;
    input_elements += info.numel();
    ++inputs;
  }
  if (inputs == 0) return false;
  int64_t output_elements = 0;
  for (const auto& out : node.outputs) {
    if (index.is_graph_output(out)) return false;
    const TensorInfo& info = graph.tensor(out);
    if (!plain(info)) return false;
    output_elements += info.numel();
  }
  return fold_size_allowed(input_elements, output_elements);
}

// The node's outputs computed now; nullopt when the evaluator cannot (no reference kernel, or a
// dtype it does not implement): the node is then left to run normally.
std::optional<std::vector<ConstData>> evaluate(const Graph& graph, const Node& node) {
  std::vector<const TensorInfo*> inputs, outputs;
  for (const auto& in : node.inputs) inputs.push_back(in.empty() ? nullptr : &graph.tensor(in));
  for (const auto& out : node.outputs) outputs.push_back(&graph.tensor(out));
  return evaluate_node(node, inputs, outputs);
}

}  // namespace

void fold_constants(Graph& graph, PassReport& report) {
  const GraphIndex index(graph);
  std::vector<size_t> folded;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    if (!foldable(graph, index, node)) continue;
    auto results = evaluate(graph, node);
    if (!results) continue;
    // Later nodes see these outputs as constants, so a whole constant chain folds in one sweep.
    for (size_t o = 0; o < node.outputs.size(); ++o) graph.tensor(node.outputs[o]).data = std::move((*results)[o]);
    report.record("folded constant " + node.op, {node.name}, {});
    folded.push_back(i);
  }
  erase_nodes(graph, folded);
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
