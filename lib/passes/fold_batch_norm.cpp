// fold_batch_norm: y = (x - mean) / sqrt(var + eps) * scale + bias is a per-channel affine map,
// so after a conv2d, conv_transpose2d, linear or matmul it folds into new weights and bias.
#include <cmath>

#include "lib/ops/registry.h"
#include "lib/passes/graph_edit.h"
#include "lib/passes/passes.h"

namespace mt::passes {
namespace {

// The per-channel affine map y = x * multiplier + offset that a batch_norm computes.
struct ChannelAffine {
  std::vector<float> multiplier;
  std::vector<float> offset;
};

std::optional<ChannelAffine> batch_norm_affine(const Graph& graph, const Node& bn, int64_t channels) {
  if (bn.inputs.size() != 5) return std::nullopt;
  std::vector<std::vector<float>> params;
  for (size_t i = 1; i < 5; ++i) {
    auto values = constant_floats(graph, bn.inputs[i]);
    if (!values || static_cast<int64_t>(values->size()) != channels) return std::nullopt;
    params.push_back(std::move(*values));
  }
  const auto& [scale, bias, mean, var] = std::tie(params[0], params[1], params[2], params[3]);
  const double epsilon = attr_float(bn, "epsilon");
  ChannelAffine affine;
  for (int64_t c = 0; c < channels; ++c) {
    const double m = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
    affine.multiplier.push_back(static_cast<float>(m));
    affine.offset.push_back(static_cast<float>(bias[c] - mean[c] * m));
  }
  return affine;
}

// New weights and bias for the producer, or nullopt when its weights are not constant.
struct Folded {
  std::string op;
  std::vector<float> weights;
  Shape weight_shape;
  std::vector<float> bias;
};

std::optional<Folded> fold_into(const Graph& graph, const Node& producer, const ChannelAffine& affine) {
  const auto channels = static_cast<int64_t>(affine.multiplier.size());
  if (producer.inputs.size() < 2) return std::nullopt;
  auto weights = constant_floats(graph, producer.inputs[1]);
  if (!weights) return std::nullopt;
  const Shape weight_shape = graph.tensor(producer.inputs[1]).shape;
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (producer.op != "matmul" && producer.inputs.size() > 2 && !producer.inputs[2].empty()) {
    auto values = constant_floats(graph, producer.inputs[2]);
    if (!values || static_cast<int64_t>(values->size()) != channels) return std::nullopt;
    bias = std::move(*values);
  }
  for (int64_t c = 0; c < channels; ++c) bias[c] = bias[c] * affine.multiplier[c] + affine.offset[c];

  Folded folded{producer.op, std::move(*weights), weight_shape, std::move(bias)};
  std::vector<float>& w = folded.weights;
  if (producer.op == "conv2d" || producer.op == "linear") {
    // W[M, ...]: output channel m owns the m-th block.
    if (weight_shape.empty() || weight_shape[0] != channels) return std::nullopt;
    const size_t block = w.size() / static_cast<size_t>(channels);
    for (size_t m = 0; m < static_cast<size_t>(channels); ++m)
      for (size_t k = 0; k < block; ++k) w[m * block + k] *= affine.multiplier[m];
  } else if (producer.op == "conv_transpose2d") {
    // W[C, M/group, kH, kW]: input channel c of group g feeds output channels g*(M/group) + j.
    if (weight_shape.size() != 4) return std::nullopt;
    const int64_t group = attr_int(producer, "group");
    const int64_t in_channels = weight_shape[0], per_group = weight_shape[1];
    if (group <= 0 || per_group * group != channels || in_channels % group != 0) return std::nullopt;
    const int64_t kernel = weight_shape[2] * weight_shape[3];
    const int64_t in_per_group = in_channels / group;
    for (int64_t c = 0; c < in_channels; ++c)
      for (int64_t j = 0; j < per_group; ++j) {
        const float m = affine.multiplier[(c / in_per_group) * per_group + j];
        for (int64_t k = 0; k < kernel; ++k) w[(c * per_group + j) * kernel + k] *= m;
      }
  } else if (producer.op == "matmul") {
    // B[K, N] becomes linear's W[N, K] = (B * multiplier)^T.
    if (weight_shape.size() != 2 || weight_shape[1] != channels) return std::nullopt;
    const int64_t k_size = weight_shape[0];
    std::vector<float> transposed(w.size());
    for (int64_t k = 0; k < k_size; ++k)
      for (int64_t n = 0; n < channels; ++n) transposed[n * k_size + k] = w[k * channels + n] * affine.multiplier[n];
    folded = Folded{"linear", std::move(transposed), {channels, k_size}, std::move(folded.bias)};
  } else {
    return std::nullopt;
  }
  return folded;
}

// The number of channels batch_norm sees (axis 1 of the producer's output) when that axis is
// the producer's output-channel axis; nullopt otherwise (a linear on a 3-D input, say).
std::optional<int64_t> producer_channels(const Graph& graph, const Node& producer) {
  const Shape& shape = graph.tensor(producer.outputs[0]).shape;
  if (producer.op == "conv2d" || producer.op == "conv_transpose2d") return shape.size() == 4 ? std::optional(shape[1]) : std::nullopt;
  if (producer.op == "linear" || producer.op == "matmul") return shape.size() == 2 ? std::optional(shape[1]) : std::nullopt;
  return std::nullopt;
}

bool try_fold(Graph& graph, const GraphIndex& index, size_t bn_index, PassReport& report) {
  const Node& bn = graph.nodes[bn_index];
  if (bn.op != "batch_norm" || bn.inputs.empty() || bn.outputs.size() != 1) return false;
  const auto producer_index = index.producer_index(bn.inputs[0]);
  if (!producer_index || !index.single_use(bn.inputs[0])) return false;
  const Node& producer = graph.nodes[*producer_index];
  if (producer.outputs.size() != 1 || !has_no_fused_activation(producer)) return false;
  if (graph.tensor(producer.outputs[0]).dtype != DType::f32) return false;
  const auto channels = producer_channels(graph, producer);
  if (!channels) return false;
  const auto affine = batch_norm_affine(graph, bn, *channels);
  if (!affine) return false;
  auto folded = fold_into(graph, producer, *affine);
  if (!folded) return false;

  Node replacement = producer;
  replacement.op = folded->op;
  if (producer.op == "matmul") replacement.attrs.clear();
  const std::string base = producer.inputs[1];
  replacement.inputs.resize(3);
  replacement.inputs[1] = add_f32_constant(graph, base + "_bn", folded->weight_shape, folded->weights);
  replacement.inputs[2] =
      add_f32_constant(graph, (producer.inputs.size() > 2 && !producer.inputs[2].empty() ? producer.inputs[2] : base) + "_bn",
                       {*channels}, folded->bias);
  replacement.outputs = graph.nodes[bn_index].outputs;
  const std::string action = "folded batch_norm into " + producer.op + (producer.op == "matmul" ? " (now linear)" : "");
  report.record(action, {producer.name, graph.nodes[bn_index].name}, {producer.name});
  replace_nodes(graph, {*producer_index, bn_index}, std::move(replacement));
  return true;
}

}  // namespace

void fold_batch_norm(Graph& graph, PassReport& report) {
  rewrite_each(graph, [&](Graph& g, const GraphIndex& index, size_t i) -> std::optional<size_t> {
    if (!try_fold(g, index, i, report)) return std::nullopt;
    return i;  // the producer before it went away: the next node now sits at the batch_norm's index
  });
  graph.remove_unused_tensors();
}

}  // namespace mt::passes
