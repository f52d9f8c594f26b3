// Why each rewrite is exact (the int8 op computes what the float32 op between dequantize and
// quantize computes, up to the requantization rounding every int8 runtime has):
// - conv2d / linear / matmul: int8 weights and the int32 bias are the file's own integers (a
//   float32 bias, which DequantizeLinear did not make, is rounded to int32 at x_scale * w_scale,
//   half an accumulator step); weights with a nonzero zero point stay float32;
// - a relu or clamp between the op and quantize is the int8 op's clamp: quantize is monotonic, so
//   quantize(clamp(v, lo, hi)) = clamp(quantize(v), quantize(lo), quantize(hi));
// - ops that move bytes (data movement, max pooling) fold only when input and output parameters
//   agree, sigmoid only at XNNPACK's fixed output parameters; concat requantizes each input whose
//   parameters differ from its output's, as quantize(dequantize(x)) does;
// - quantize(dequantize(q)) with q's own parameters is q;
// - x * hardsigmoid(x) (alpha 1/6, beta 1/2), PyTorch's export of hardswish, is int8 hardswish, and
//   x * sigmoid(x) (SiLU) int8 silu, whose tables evaluate the float function once per int8 value
//   (float32 rounding of the formula aside).
#include "lib/import/fold_qdq.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "lib/ops/registry.h"

namespace mt::onnx_import {
namespace {

bool is_compute(std::string_view op) {
  static const std::set<std::string, std::less<>> ops = {
      "conv2d",  "linear", "matmul",  "add",       "mul",        "max_pool2d", "avg_pool2d", "global_avg_pool",
      "concat", "sigmoid", "hardswish", "hardsigmoid"};
  return ops.count(op) > 0;
}

bool is_data_movement(std::string_view op) {
  static const std::set<std::string, std::less<>> ops = {"reshape", "flatten",  "squeeze",
                                                         "unsqueeze", "identity", "transpose"};
  return ops.count(op) > 0;
}

// Ops with the act_min / act_max clamp a following relu or clamp folds into.
bool has_clamp(std::string_view op) { return op == "conv2d" || op == "linear" || op == "matmul" || op == "add"; }

size_t activation_inputs(const Node& node) {
  if (node.op == "concat") return node.inputs.size();
  return node.op == "add" || node.op == "mul" ? 2 : 1;
}

bool has_weights(std::string_view op) { return op == "conv2d" || op == "linear" || op == "matmul"; }

bool relatively_equal(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b)); }

class Folder {
 public:
  Folder(Graph& graph, const ImportContext& ctx) : graph_(graph), ctx_(ctx) {
    outputs_.insert(graph.outputs.begin(), graph.outputs.end());
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      for (const auto& out : graph.nodes[i].outputs) producer_[out] = i;
      for (const auto& in : graph.nodes[i].inputs)
        if (!in.empty()) consumers_[in].push_back(i);
    }
    removed_.assign(graph.nodes.size(), false);
  }

  QdqFoldReport run() {
    bool quantized = false;
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      if (removed_[i]) continue;
      Node& node = graph_.nodes[i];
      for (auto& in : node.inputs)
        if (auto it = renamed_.find(in); it != renamed_.end()) in = it->second;
      quantized = quantized || node.op == "quantize" || node.op == "dequantize";
      if (node.op == "quantize") {
        drop_requantize(i);
      } else if ((node.op == "hardsigmoid" || node.op == "sigmoid") && in_gated(i)) {
        continue;  // folded with its mul
      } else if (node.op == "mul" && fold_gated(i)) {
        continue;
      } else if (is_compute(node.op) || is_data_movement(node.op)) {
        const bool involved = touches_qdq(i);
        if (auto reason = fold(i); reason && involved) {
          const Node& kept = graph_.nodes[i];
          report_.float_nodes.push_back(fmt::format("node '{}' ({}): {}", kept.name, kept.op, *reason));
          spdlog::info("QDQ: node '{}' ({}) stays float32: {}", kept.name, kept.op, *reason);
        }
      }
    }
    std::vector<Node> kept;
    for (size_t i = 0; i < graph_.nodes.size(); ++i)
      if (!removed_[i]) kept.push_back(std::move(graph_.nodes[i]));
    graph_.nodes = std::move(kept);
    if (quantized)
      spdlog::info("QDQ: {} ops run in int8 with the file's scales, {} stay float32, {} requantizations dropped",
                   report_.int8_nodes, report_.float_nodes.size(), report_.removed_requantize);
    return std::move(report_);
  }

 private:
  // The int8 tensor `tensor` (float32) is dequantized from, if a live dequantize makes it.
  std::optional<std::string> dequantized_from(const std::string& tensor) const {
    auto it = producer_.find(tensor);
    if (it == producer_.end() || removed_[it->second]) return std::nullopt;
    const Node& node = graph_.nodes[it->second];
    if (node.op != "dequantize") return std::nullopt;
    return node.inputs[0];
  }

  // The one node reading `tensor`, when nothing else (a second reader, the graph's outputs) does.
  std::optional<size_t> sole_reader(const std::string& tensor) const {
    if (outputs_.count(tensor)) return std::nullopt;
    auto it = consumers_.find(tensor);
    if (it == consumers_.end() || it->second.size() != 1) return std::nullopt;
    return it->second[0];
  }

  const Node& node_at(size_t i) const { return graph_.nodes[i]; }

  // Whether the node reads a dequantized tensor or feeds a quantize: a float32 fallback worth
  // reporting.
  bool touches_qdq(size_t i) const {
    const Node& node = node_at(i);
    for (const auto& in : node.inputs)
      if (!in.empty() && (dequantized_from(in) || ctx_.dequantized_origin(in))) return true;
    for (const auto& out : node.outputs) {
      auto it = consumers_.find(out);
      if (it == consumers_.end()) continue;
      for (size_t reader : it->second)
        if (node_at(reader).op == "quantize") return true;
    }
    return false;
  }

  // quantize(dequantize(q)) with q's parameters: its readers read q.
  void drop_requantize(size_t i) {
    const Node& node = node_at(i);
    const std::string& y = node.outputs[0];
    const auto q = dequantized_from(node.inputs[0]);
    if (!q || outputs_.count(y) || graph_.tensor(*q).quant != graph_.tensor(y).quant) return;
    renamed_[y] = *q;
    removed_[i] = true;
    ++report_.removed_requantize;
  }

  std::optional<std::string> fold(size_t i) {
    const Node& node = node_at(i);
    const size_t activations = is_data_movement(node.op) ? 1 : activation_inputs(node);
    std::vector<std::string> sources;
    for (size_t a = 0; a < activations; ++a) {
      const auto q = a < node.inputs.size() ? dequantized_from(node.inputs[a]) : std::nullopt;
      if (!q) return fmt::format("input '{}' is not dequantized", a < node.inputs.size() ? node.inputs[a] : "");
      sources.push_back(*q);
    }
    if (node.outputs.size() != 1) return std::string("it has several outputs");
    // The result, through an optional relu or clamp, must go to exactly one quantize.
    std::string tail = node.outputs[0];
    std::optional<size_t> clamp;
    auto next = sole_reader(tail);
    if (next && has_clamp(node.op) && (node_at(*next).op == "relu" || node_at(*next).op == "clamp")) {
      clamp = next;
      tail = node_at(*next).outputs[0];
      next = sole_reader(tail);
    }
    if (!next || node_at(*next).op != "quantize") return fmt::format("its result '{}' is not only quantized", tail);
    const std::string y = node_at(*next).outputs[0];
    const QuantParams& y_params = *graph_.tensor(y).quant;

    if (is_data_movement(node.op) || node.op == "max_pool2d")
      for (const auto& q : sources)
        if (*graph_.tensor(q).quant != y_params)
          return fmt::format("'{}' and '{}' have different quantization parameters; mt's int8 {} moves bytes", q, y,
                             node.op);
    if (node.op == "sigmoid" && (y_params.scales[0] != 1.0f / 256.0f || y_params.zero_points[0] != -128))
      return std::string("mt's int8 sigmoid needs output scale 1/256 and zero point -128");
    if (node.op == "conv2d" && graph_.tensor(sources[0]).shape.size() != 4)
      return std::string("mt's int8 convolution is 2-D");

    Node folded = node;
    for (size_t a = 0; a < activations; ++a) folded.inputs[a] = sources[a];
    folded.outputs = {y};
    if (clamp && !add_clamp(node_at(*clamp), folded)) return std::string("its clamp bounds are empty");
    if (has_weights(node.op))
      if (auto reason = int8_weights(node, sources[0], folded)) return reason;
    graph_.nodes[i] = std::move(folded);
    removed_[*next] = true;
    if (clamp) removed_[*clamp] = true;
    ++report_.int8_nodes;
    return std::nullopt;
  }

  // The mul of x * gate(x) whose gate (a hardsigmoid with alpha 1/6 and beta 1/2, or a sigmoid) is
  // node i, if it is that pattern: hardswish or silu.
  std::optional<size_t> gated_mul(size_t i) const {
    const Node& h = node_at(i);
    if (h.op == "hardsigmoid" && (!relatively_equal(attr_float(h, "alpha"), 1.0 / 6.0) || attr_float(h, "beta") != 0.5))
      return std::nullopt;
    const auto mul = sole_reader(h.outputs[0]);
    if (!mul || node_at(*mul).op != "mul") return std::nullopt;
    const Node& m = node_at(*mul);
    const std::string& other = m.inputs[0] == h.outputs[0] ? m.inputs[1] : m.inputs[0];
    if (other != h.inputs[0]) return std::nullopt;
    return mul;
  }

  bool in_gated(size_t i) const { return gated_mul(i).has_value() && dequantized_from(node_at(i).inputs[0]); }

  // mul(x, gate(x)) -> quantize, x dequantized: int8 hardswish (gate hardsigmoid) or silu (sigmoid).
  bool fold_gated(size_t i) {
    const Node& mul = node_at(i);
    for (size_t k = 0; k < 2; ++k) {
      auto h = producer_.find(mul.inputs[k]);
      if (h == producer_.end() || removed_[h->second]) continue;
      const std::string& gate = node_at(h->second).op;
      if ((gate != "hardsigmoid" && gate != "sigmoid") || gated_mul(h->second) != i) continue;
      const auto q = dequantized_from(node_at(h->second).inputs[0]);
      const auto next = sole_reader(mul.outputs[0]);
      if (!q || !next || node_at(*next).op != "quantize") return false;
      const std::string y = node_at(*next).outputs[0];
      graph_.nodes[i] =
          Node{.name = mul.name, .op = gate == "sigmoid" ? "silu" : "hardswish", .inputs = {*q}, .outputs = {y}};
      removed_[h->second] = true;
      removed_[*next] = true;
      ++report_.int8_nodes;
      return true;
    }
    return false;
  }

  // Intersects the relu / clamp `act` with the folded node's act_min / act_max.
  static bool add_clamp(const Node& act, Node& folded) {
    double lo = attr_float(folded, "act_min"), hi = attr_float(folded, "act_max");
    if (act.op == "relu") {
      lo = std::max(lo, 0.0);
    } else {
      lo = std::max(lo, attr_float(act, "min"));
      hi = std::min(hi, attr_float(act, "max"));
    }
    if (lo > hi) return false;
    folded.attrs["act_min"] = lo;
    folded.attrs["act_max"] = hi;
    return true;
  }

  // The int8 weights and int32 bias of conv2d / linear / matmul (which becomes linear), or why not.
  std::optional<std::string> int8_weights(const Node& node, const std::string& x, Node& folded) {
    const TensorInfo* w = ctx_.dequantized_origin(node.inputs[1]);
    if (!w || w->dtype != DType::i8)
      return fmt::format("weight '{}' is not a dequantized int8 constant", node.inputs[1]);
    const QuantParams& w_params = *w->quant;
    for (int32_t zero : w_params.zero_points)
      if (zero != 0)
        return fmt::format("weight '{}' has zero point {}; mt's int8 weights are symmetric", node.inputs[1], zero);
    const bool matmul = node.op == "matmul";
    if (matmul && w->shape.size() != 2) return fmt::format("weight '{}' is not 2-D", node.inputs[1]);
    const int out_axis = matmul ? 1 : 0;
    if (w_params.axis >= 0 && w_params.axis != out_axis)
      return fmt::format("weight '{}' is quantized along axis {}, not along its output channels", node.inputs[1],
                         w_params.axis);
    const auto channels = static_cast<size_t>(w->shape[static_cast<size_t>(out_axis)]);
    auto w_scale = [&](size_t c) { return w_params.scales[w_params.scales.size() == 1 ? 0 : c]; };
    const float x_scale = graph_.tensor(x).quant->scales[0];

    std::vector<int32_t> bias;
    const bool has_bias = node.inputs.size() > 2 && !node.inputs[2].empty();
    if (has_bias) {
      const TensorInfo& b = graph_.tensor(node.inputs[2]);
      if (!b.is_constant() || b.dtype != DType::f32 || static_cast<size_t>(b.numel()) != channels)
        return fmt::format("bias '{}' is not a constant of {} values", node.inputs[2], channels);
      bias.resize(channels);
      const TensorInfo* origin = ctx_.dequantized_origin(node.inputs[2]);
      bool file_integers = origin && origin->dtype == DType::i32;
      for (size_t c = 0; file_integers && c < channels; ++c) {
        const QuantParams& p = *origin->quant;
        const size_t k = p.scales.size() == 1 ? 0 : c;
        file_integers =
            p.zero_points[k] == 0 && relatively_equal(p.scales[k], static_cast<double>(x_scale) * w_scale(c));
      }
      const auto values = file_integers ? origin->data.as<int32_t>() : std::span<const int32_t>();
      const auto reals = b.data.as<float>();
      for (size_t c = 0; c < channels; ++c) {
        if (file_integers) {
          bias[c] = values[c];
          continue;
        }
        const double q = std::nearbyint(static_cast<double>(reals[c]) / (static_cast<double>(x_scale) * w_scale(c)));
        if (!(std::abs(q) <= std::numeric_limits<int32_t>::max()))
          return fmt::format("bias '{}' does not fit int32 at scale x_scale * w_scale", node.inputs[2]);
        bias[c] = static_cast<int32_t>(q);
      }
      if (!file_integers)
        spdlog::info("QDQ: node '{}': float32 bias '{}' rounded to int32 at scale x_scale * w_scale", node.name,
                     node.inputs[2]);
    }

    // Weights as [out, ...] int8 with per-tensor or axis-0 parameters (matmul's [K, N] transposed).
    TensorInfo weights{.name = unique_name(node.inputs[1] + "_q8"), .dtype = DType::i8, .shape = w->shape,
                       .quant = w_params};
    if (matmul) {
      const auto k = static_cast<size_t>(w->shape[0]), n = static_cast<size_t>(w->shape[1]);
      weights.shape = {w->shape[1], w->shape[0]};
      weights.data = ConstData::allocate(k * n);
      const auto* src = reinterpret_cast<const int8_t*>(w->data.data());
      auto* dst = reinterpret_cast<int8_t*>(weights.data.mutable_data());
      for (size_t r = 0; r < k; ++r)
        for (size_t c = 0; c < n; ++c) dst[c * k + r] = src[r * n + c];
      if (weights.quant->axis >= 0) weights.quant->axis = 0;
      folded.op = "linear";
    } else {
      weights.data = w->data;
    }
    folded.inputs[1] = weights.name;
    graph_.add_tensor(std::move(weights));
    if (has_bias) {
      QuantParams b_params{.axis = 0};
      for (size_t c = 0; c < channels; ++c) {
        b_params.scales.push_back(x_scale * w_scale(c));
        b_params.zero_points.push_back(0);
      }
      TensorInfo b{.name = unique_name(node.inputs[2] + "_q32"), .dtype = DType::i32,
                   .shape = {static_cast<int64_t>(channels)}, .quant = std::move(b_params),
                   .data = ConstData::copy_of(bias.data(), bias.size() * sizeof(int32_t))};
      folded.inputs[2] = b.name;
      graph_.add_tensor(std::move(b));
    }
    return std::nullopt;
  }

  std::string unique_name(const std::string& base) const {
    std::string name = base;
    for (int k = 1; graph_.has_tensor(name); ++k) name = fmt::format("{}_{}", base, k);
    return name;
  }

  Graph& graph_;
  const ImportContext& ctx_;
  std::unordered_set<std::string> outputs_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<size_t>> consumers_;
  std::unordered_map<std::string, std::string> renamed_;  // dropped quantize output -> the int8 tensor
  std::vector<bool> removed_;
  QdqFoldReport report_;
};

// Quantized integer tensors computed at run time may only be dequantized or moved: any other op
// would compute on the integers, which mt's int8 ops read as the real values they represent (and
// uint8 ones are held shifted). The ONNX name of each graph output still resolves to the tensor it
// was before outputs were named.
void check_integer_uses(const Graph& graph, ImportContext& ctx) {
  const auto consumers = graph.consumers();
  std::vector<std::pair<std::string, bool>> pending;  // tensor, held shifted
  for (const auto& [name, info] : graph.tensors)
    if (!info.is_constant() && info.dtype == DType::i8 && info.quant)
      pending.emplace_back(name, ctx.is_shifted_uint8(name));
  for (const auto& output : graph.outputs)
    if (ctx.is_shifted_uint8(ctx.tensor_name(output))) pending.emplace_back(output, true);
  std::unordered_set<std::string> seen;
  const std::unordered_set<std::string> outputs(graph.outputs.begin(), graph.outputs.end());
  while (!pending.empty()) {
    const auto [tensor, shifted] = pending.back();
    pending.pop_back();
    if (!seen.insert(tensor).second) continue;
    if (shifted && outputs.count(tensor))
      unsupported("graph output '{}' is a quantized uint8 tensor, which mt holds as int8 (q - 128); end the graph "
                  "with a DequantizeLinear",
                  tensor);
    auto it = consumers.find(tensor);
    if (it == consumers.end()) continue;
    for (size_t i : it->second) {
      const Node& node = graph.nodes[i];
      if (node.op == "dequantize") continue;
      const bool moves = is_data_movement(node.op) || node.op == "concat" || node.op == "split" || node.op == "slice";
      if (!moves)
        unsupported("node '{}' ({}) computes on '{}', a quantized integer tensor; mt takes those only through "
                    "DequantizeLinear and data movement",
                    node.name, node.op, tensor);
      for (const auto& out : node.outputs) pending.emplace_back(out, shifted);
    }
  }
}

}  // namespace

QdqFoldReport fold_qdq(Graph& graph, ImportContext& ctx) {
  check_integer_uses(graph, ctx);
  return Folder(graph, ctx).run();
}

}  // namespace mt::onnx_import
