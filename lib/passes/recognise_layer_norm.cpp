// recognise_layer_norm: the primitive spelling of LayerNorm that exporters write for opsets
// without LayerNormalization,
//   mean = reduce_mean(x, trailing axes); d = x - mean; var = reduce_mean(d^2 or d*d, same axes)
//   y = d / sqrt(var + eps) [* scale] [+ bias]
// becomes layer_norm(x, scale, bias) over those axes.
#include <numeric>

#include "lib/ops/registry.h"
#include "lib/passes/passes.h"
#include "lib/passes/patterns.h"

namespace mt::passes {
namespace {

// The first normalised axis when `node` is a keepdims reduce_mean over the trailing axes of a
// rank-`rank` input; nullopt otherwise.
std::optional<int64_t> trailing_reduction(const Node& node, size_t rank) {
  if (attr_int(node, "keepdims") != 1) return std::nullopt;
  std::vector<int64_t> axes = attr_ints(node, "axes");
  if (axes.empty()) {
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (auto& axis : axes) {
    auto normalised = normalize_axis(axis, rank);
    if (!normalised) return std::nullopt;
    axis = *normalised;
  }
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != static_cast<int64_t>(rank - axes.size() + i)) return std::nullopt;
  return static_cast<int64_t>(rank - axes.size());
}

// True when `param` broadcasts to the normalised dims x.shape[axis:] without touching the others.
bool fits_normalised_dims(const Graph& graph, const std::string& param, const Shape& x_shape, int64_t axis) {
  const TensorInfo& info = graph.tensor(param);
  if (info.dtype != DType::f32 || info.quant) return false;
  const size_t normalised = x_shape.size() - static_cast<size_t>(axis);
  if (info.shape.size() > normalised) return false;
  for (size_t i = 0; i < info.shape.size(); ++i) {
    const int64_t dim = info.shape[info.shape.size() - 1 - i];
    if (dim != 1 && dim != x_shape[x_shape.size() - 1 - i]) return false;
  }
  return true;
}

struct Match {
  std::string x;
  int64_t axis = 0;
  double epsilon = 0;
  std::vector<size_t> nodes;  // up to and including the div
};

// Walks back from a div node: d / sqrt(reduce_mean(d^2) + eps) with d = x - reduce_mean(x).
std::optional<Match> match_normalisation(const Graph& graph, const GraphIndex& index, size_t div_index) {
  const Node& div = graph.nodes[div_index];
  if (div.op != "div" || div.inputs.size() != 2) return std::nullopt;
  Match match;
  match.nodes.push_back(div_index);
  const std::string& d = div.inputs[0];
  const auto sqrt = private_producer(graph, index, div.inputs[1], "sqrt");
  if (!sqrt) return std::nullopt;
  const auto add = private_producer(graph, index, graph.nodes[*sqrt].inputs[0], "add");
  if (!add || !has_no_fused_activation(graph.nodes[*add])) return std::nullopt;
  const Node& add_node = graph.nodes[*add];
  std::string variance;
  for (size_t side = 0; side < 2 && variance.empty(); ++side) {
    const auto eps = scalar_constant(graph, add_node.inputs[side]);
    if (eps && *eps > 0 && !scalar_constant(graph, add_node.inputs[1 - side])) {
      match.epsilon = *eps;
      variance = add_node.inputs[1 - side];
    }
  }
  if (variance.empty()) return std::nullopt;
  const auto var_mean = private_producer(graph, index, variance, "reduce_mean");
  if (!var_mean) return std::nullopt;
  const std::string& squared = graph.nodes[*var_mean].inputs[0];
  // d feeds the square and the division: two readers for pow(d, 2), three for mul(d, d).
  std::optional<size_t> square = private_producer(graph, index, squared, "pow");
  size_t d_uses = 2;
  if (square) {
    const auto exponent = scalar_constant(graph, graph.nodes[*square].inputs[1]);
    if (!exponent || !nearly_equal(*exponent, 2.0) || graph.nodes[*square].inputs[0] != d) return std::nullopt;
  } else {
    square = private_producer(graph, index, squared, "mul");
    if (!square || graph.nodes[*square].inputs[0] != d || graph.nodes[*square].inputs[1] != d) return std::nullopt;
    d_uses = 3;
  }
  const auto sub = private_producer(graph, index, d, "sub", d_uses);
  if (!sub) return std::nullopt;
  match.x = graph.nodes[*sub].inputs[0];
  const auto mean = private_producer(graph, index, graph.nodes[*sub].inputs[1], "reduce_mean");
  if (!mean || graph.nodes[*mean].inputs[0] != match.x) return std::nullopt;

  const TensorInfo& x = graph.tensor(match.x);
  const auto axis = trailing_reduction(graph.nodes[*mean], x.shape.size());
  if (!axis || trailing_reduction(graph.nodes[*var_mean], x.shape.size()) != axis) return std::nullopt;
  if (!same_type_as(graph, div, match.x)) return std::nullopt;
  match.axis = *axis;
  match.nodes.insert(match.nodes.end(), {*sqrt, *add, *var_mean, *square, *sub, *mean});
  return match;
}

// If the only reader of node `at`'s output is an `op` node combining it with a parameter that fits
// the normalised dims, returns that node and the parameter.
std::optional<std::pair<size_t, std::string>> affine_step(const Graph& graph, const GraphIndex& index, size_t at,
                                                          std::string_view op, const Match& match) {
  const std::string& out = graph.nodes[at].outputs[0];
  if (!index.single_use(out)) return std::nullopt;
  const size_t next = index.consumers(out)[0];
  const Node& node = graph.nodes[next];
  if (node.op != op || node.inputs.size() != 2 || !has_no_fused_activation(node)) return std::nullopt;
  const std::string& param = node.inputs[0] == out ? node.inputs[1] : node.inputs[0];
  if (param == out || !fits_normalised_dims(graph, param, graph.tensor(match.x).shape, match.axis)) return std::nullopt;
  if (!same_type_as(graph, node, match.x)) return std::nullopt;
  return std::pair{next, param};
}

}  // namespace

void recognise_layer_norm(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    auto match = match_normalisation(g, index, i);
    if (!match) return std::nullopt;
    size_t last = i;
    std::string scale, bias;
    if (auto step = affine_step(g, index, last, "mul", *match)) {
      std::tie(last, scale) = *step;
      match->nodes.push_back(last);
    }
    if (auto step = affine_step(g, index, last, "add", *match)) {
      std::tie(last, bias) = *step;
      match->nodes.push_back(last);
    }
    std::vector<std::string> inputs = {match->x, scale, bias};
    while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();
    // The scale and bias may be computed after the normalisation; the layer_norm goes where the
    // last node of the subgraph was, after all of them.
    const Node replacement = replacement_node(g.nodes[last], "layer_norm", inputs,
                                              {{"axis", match->axis}, {"epsilon", match->epsilon}});
    report.record("recognised layer_norm", node_names(g, match->nodes), {g.nodes[last].name});
    const size_t removed_before = static_cast<size_t>(
        std::count_if(match->nodes.begin(), match->nodes.end(), [&](size_t n) { return n < i; }));
    replace_nodes(g, match->nodes, replacement);
    // Resume at the first node after the div's old slot: nodes between it and the replacement
    // (which may sit further on, where the bias add was) have not been scanned yet.
    return i - removed_before + (last == i ? 1 : 0);
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
