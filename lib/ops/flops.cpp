#include "lib/ops/flops.h"

#include "lib/ops/op_table.h"

namespace mt {
namespace {

double product(const Shape& shape, size_t begin, size_t end) {
  double p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= static_cast<double>(shape[i]);
  return p;
}

const Shape& shape_of(const Graph& graph, const std::string& tensor) { return graph.tensor(tensor).shape; }

}  // namespace

// conv2d: every output element of every output channel sums (C / group) * kH * kW products.
// The weight [M, C/group, kH, kW] holds exactly that many values per output channel.
double conv2d_flops(const Graph& graph, const Node& node) {
  const Shape& out = shape_of(graph, node.outputs.at(0));  // [N, M, oH, oW]
  const Shape& weight = shape_of(graph, node.inputs.at(1));
  return 2.0 * product(out, 0, out.size()) * product(weight, 1, weight.size());
}

// conv_transpose2d scatters every input element into (M / group) * kH * kW outputs; the weight
// [C, M/group, kH, kW] has that many values per input channel.
double conv_transpose2d_flops(const Graph& graph, const Node& node) {
  const Shape& in = shape_of(graph, node.inputs.at(0));  // [N, C, H, W]
  const Shape& weight = shape_of(graph, node.inputs.at(1));
  return 2.0 * product(in, 0, in.size()) * product(weight, 1, weight.size());
}

// linear: [..., K] x [N, K]^T; each of the prod(out) outputs is a K-long dot product.
double linear_flops(const Graph& graph, const Node& node) {
  const Shape& out = shape_of(graph, node.outputs.at(0));
  const Shape& x = shape_of(graph, node.inputs.at(0));
  const double k = x.empty() ? 1.0 : static_cast<double>(x.back());
  return 2.0 * product(out, 0, out.size()) * k;
}

// matmul (numpy semantics): each output element is a K-long dot product, K being A's last dim
// (a 1-D A is a row vector of length K, so the same holds).
double matmul_flops(const Graph& graph, const Node& node) {
  const Shape& out = shape_of(graph, node.outputs.at(0));
  const Shape& a = shape_of(graph, node.inputs.at(0));
  const double k = a.empty() ? 1.0 : static_cast<double>(a.back());
  return 2.0 * product(out, 0, out.size()) * k;
}

// rnn, gru, lstm: at each of T steps, each of B sequences multiplies its input by W [D, G*H, I]
// and its hidden state by R [D, G*H, H] (steps past a sequence's length counted too).
double recurrent_flops(const Graph& graph, const Node& node) {
  const Shape& x = shape_of(graph, node.inputs.at(0));  // [T, B, I]
  const Shape& w = shape_of(graph, node.inputs.at(1));
  const Shape& r = shape_of(graph, node.inputs.at(2));
  return 2.0 * product(x, 0, 2) * (product(w, 0, w.size()) + product(r, 0, r.size()));
}

std::optional<double> node_flops(const Graph& graph, const Node& node) {
  const OpInfo* info = find_op_info(node.op);
  if (info == nullptr || info->flops == nullptr) return std::nullopt;
  return info->flops(graph, node);
}

}  // namespace mt
