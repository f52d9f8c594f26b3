// fold_constants: evaluates nodes whose inputs are all constant with the reference kernels and
// turns their outputs into constants (same tensor names), so nothing computes them at run time.
#include <algorithm>

#include "lib/ops/eval/reference.h"
#include "lib/core/error.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

bool plain(const TensorInfo& info) { return !info.quant && info.layout.empty(); }

// Whether folding `node` is allowed: constant plain inputs, outputs that are not graph outputs
// and that do not blow up the model (an expand of a scalar to a feature map stays a node).
bool foldable(const Graph& graph, const GraphIndex& index, const Node& node) {
  size_t input_bytes = 0, inputs = 0;
  for (const auto& in : node.inputs) {
    if (in.empty()) continue;
    const TensorInfo& info = graph.tensor(in);
    if (!info.is_constant() || !plain(info)) return false;
    input_bytes += info.data.size();
    ++inputs;
  }
  if (inputs == 0) return false;
  size_t output_bytes = 0;
  for (const auto& out : node.outputs) {
    if (index.is_graph_output(out)) return false;
    const TensorInfo& info = graph.tensor(out);
    if (!plain(info)) return false;
    output_bytes += info.byte_size();
  }
  return output_bytes <= std::max(kFoldMaxGrowth * input_bytes, kFoldSmallBytes);
}

// Runs the node's reference kernel; nullopt when there is none or it rejects the node (a dtype
// it does not implement): the node is then left to run normally.
std::optional<std::vector<ConstData>> evaluate(const Graph& graph, const Node& node) {
  const reference::Kernel kernel = reference::find_kernel(node.op);
  if (kernel == nullptr) return std::nullopt;
  std::vector<reference::ConstView> inputs;
  for (const auto& in : node.inputs) {
    if (in.empty()) {
      inputs.push_back({});
      continue;
    }
    const TensorInfo& info = graph.tensor(in);
    inputs.push_back({&info, info.data.data()});
  }
  std::vector<ConstData> results;
  std::vector<reference::MutView> outputs;
  for (const auto& out : node.outputs) {
    const TensorInfo& info = graph.tensor(out);
    results.push_back(ConstData::allocate(info.byte_size()));
    outputs.push_back({&info, results.back().mutable_data()});
  }
  try {
    kernel(node, inputs, outputs);
  } catch (const Error& error) {
    if (error.code() == ExitCode::unsupported) return std::nullopt;
    throw;
  }
  return results;
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
