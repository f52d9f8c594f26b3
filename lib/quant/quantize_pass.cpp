#include "lib/quant/quantize_pass.h"

#include <cmath>
#include <unordered_set>

#include "lib/core/error.h"
#include "lib/ops/int8_limits.h"
#include "lib/ops/op_table.h"
#include "lib/ops/registry.h"
#include "lib/passes/graph_edit.h"
#include "lib/quant/quant_params.h"

namespace mt::quant {

bool has_int8_compute(std::string_view op) {
  const OpInfo* info = find_op_info(op);
  return info != nullptr && info->quant == QuantRole::int8_compute;
}

bool is_int8_data_movement(std::string_view op) {
  const OpInfo* info = find_op_info(op);
  return info != nullptr && info->quant == QuantRole::int8_data_movement;
}

namespace {

constexpr std::string_view kOpPrefix = "op:";  // --keep-fp32 op:TYPE

}  // namespace

bool keeps_fp32(const QuantizeOptions& options, const Node& node) {
  return options.keep_fp32.count(node.name) > 0 || options.keep_fp32.count(std::string(kOpPrefix) + node.op) > 0;
}

namespace {

// Inputs of a compute op that carry activations (the rest are weights and bias).
size_t activation_inputs(const Node& node) {
  if (node.op == "concat") return node.inputs.size();
  return node.op == "add" || node.op == "mul" ? 2 : 1;
}

// Ops whose int8 inputs and outputs share one set of parameters, so that they move bytes
// unchanged: data movement, max pooling (XNNPACK's s8 max pooling requires it) and concat
// (a byte copy, as XNNPACK-style backends want; TFLite ties concat the same way).
bool ties_parameters(std::string_view op) { return op == "max_pool2d" || op == "concat" || is_int8_data_movement(op); }

// The calibrated ranges with every group of tied tensors widened to the union of its members'
// ranges (a union-find over tensor names), so that each group gets one scale and zero point.
std::map<std::string, Range, std::less<>> tied_ranges(const Graph& graph,
                                                       const std::map<std::string, Range, std::less<>>& ranges,
                                                       const QuantizeOptions& options) {
  std::map<std::string, std::string, std::less<>> parent;
  auto find = [&](std::string name) {
    while (true) {
      auto it = parent.find(name);
      if (it == parent.end() || it->second == name) return name;
      name = it->second;
    }
  };
  auto unite = [&](const std::string& a, const std::string& b) {
    if (!ranges.count(a) || !ranges.count(b)) return;
    const std::string ra = find(a), rb = find(b);
    if (ra != rb) parent[rb] = ra;
  };
  for (const Node& node : graph.nodes) {
    if (!ties_parameters(node.op) || keeps_fp32(options, node) || node.inputs.empty()) continue;
    const size_t data_inputs = node.op == "concat" ? node.inputs.size() : 1;
    for (size_t i = 0; i < data_inputs; ++i) unite(node.inputs[0], node.inputs[i]);
    for (const auto& output : node.outputs) unite(node.inputs[0], output);
  }
  std::map<std::string, Range, std::less<>> widened;
  for (const auto& [name, range] : ranges) {
    Range& group = widened.try_emplace(find(name), range).first->second;
    group.lo = std::min(group.lo, range.lo);
    group.hi = std::max(group.hi, range.hi);
  }
  std::map<std::string, Range, std::less<>> result;
  for (const auto& [name, range] : ranges) result[name] = widened[find(name)];
  return result;
}

// XNNPACK's int8 sigmoid (and PyTorch's) fixes the output at scale 1/256, zero point -128:
// [0, 1) in 256 steps.
QuantParams sigmoid_output_params() { return QuantParams{{1.0f / 256.0f}, {-128}, -1}; }

// What bounds a conv2d / linear's largest weight scale: max |w| / 127 over its channels, and
// max |bias| (weight_scale_floor raises a channel's scale until its bias fits in int32).
struct WeightExtent {
  double scale = 0;
  double bias = 0;
};

WeightExtent weight_extent(const Graph& graph, const Node& node) {
  WeightExtent extent;
  const TensorInfo& weight = graph.tensor(node.inputs[1]);
  const auto values = passes::constant_floats(graph, node.inputs[1]);
  if (!values || weight.shape.empty() || weight.shape[0] <= 0) return extent;
  for (float w : *values) extent.scale = std::max(extent.scale, std::abs(static_cast<double>(w)) / 127.0);
  if (node.inputs.size() > 2 && !node.inputs[2].empty())
    if (const auto bias = passes::constant_floats(graph, node.inputs[2]))
      for (float b : *bias) extent.bias = std::max(extent.bias, std::abs(static_cast<double>(b)));
  return extent;
}

// The tied ranges, widened until every int8 node's scale ratios lie inside what the cpu kernels
// take (lib/ops/int8_limits.h) with a factor 2 to spare: an output range that collapsed (a dead
// or constant tensor) or an outlier weight would otherwise give a conv a requantization multiplier
// of 256 or more, or an add an input far finer than its output. Widening only makes scales
// coarser, so the rounds converge; the requantization lower bound of conv2d / linear is met by
// flooring weight scales instead (weight_scale_floor). Sigmoid outputs get the fixed parameters
// of the int8 sigmoid, as a range.
std::map<std::string, Range, std::less<>> fit_kernel_limits(const Graph& graph,
                                                            std::map<std::string, Range, std::less<>> ranges,
                                                            const QuantizeOptions& options) {
  std::map<std::string, WeightExtent, std::less<>> extents;
  for (const Node& node : graph.nodes) {
    if (keeps_fp32(options, node)) continue;
    if (node.op == "sigmoid" && ranges.count(node.outputs[0])) ranges[node.outputs[0]] = {0.0f, 255.0f / 256.0f};
    if ((node.op == "conv2d" || node.op == "linear") && node.inputs.size() > 1) extents[node.name] = weight_extent(graph, node);
  }
  constexpr int kRounds = 16;
  for (int round = 0; round < kRounds; ++round) {
    const auto tied = tied_ranges(graph, ranges, options);
    bool changed = false;
    const auto scale = [&](const std::string& tensor) {
      const Range& r = tied.at(tensor);
      return static_cast<double>(activation_params(r.lo, r.hi).scales[0]);
    };
    const auto at_least = [&](const std::string& tensor, double min_scale) {
      if (scale(tensor) >= min_scale) return;
      ranges[tensor] = widen_to_scale(tied.at(tensor), min_scale);
      changed = true;
    };
    for (const Node& node : graph.nodes) {
      if (!has_int8_compute(node.op) || keeps_fp32(options, node) || node.outputs.empty()) continue;
      const std::string& y = node.outputs[0];
      bool calibrated = tied.count(y) > 0;
      for (size_t i = 0; i < std::min(activation_inputs(node), node.inputs.size()); ++i)
        calibrated = calibrated && tied.count(node.inputs[i]) > 0;
      if (!calibrated) continue;
      if (auto it = extents.find(node.name); it != extents.end()) {
        const double x = scale(node.inputs[0]);
        const double w = std::max(it->second.scale, it->second.bias / (x * kMaxBiasSteps));
        at_least(y, 2.0 * x * w / int8_limits::kRequantization.max);
      } else if (node.op == "add") {
        const double a = scale(node.inputs[0]), b = scale(node.inputs[1]);
        at_least(y, 2.0 * std::max(a, b) / int8_limits::kAddInput.max);
        for (size_t i = 0; i < 2; ++i) at_least(node.inputs[i], 2.0 * scale(y) * int8_limits::kAddInput.min);
      } else if (node.op == "mul") {
        const double a = scale(node.inputs[0]), b = scale(node.inputs[1]);
        at_least(y, 2.0 * a * b / int8_limits::kMulProduct.max);
        const size_t finer = a < b ? 0 : 1;
        at_least(node.inputs[finer], 2.0 * scale(y) * int8_limits::kMulProduct.min / std::max(a, b));
      } else if (node.op == "global_avg_pool") {
        at_least(y, 2.0 * scale(node.inputs[0]) / int8_limits::kGlobalAvgPool.max);
        at_least(node.inputs[0], 2.0 * scale(y) * int8_limits::kGlobalAvgPool.min);
      }
    }
    if (!changed) return tied;
  }
  return tied_ranges(graph, ranges, options);
}

class Quantizer {
 public:
  Quantizer(const Graph& source, const std::map<std::string, Range, std::less<>>& ranges, const QuantizeOptions& options)
      : source_(source), ranges_(fit_kernel_limits(source, ranges, options)), options_(options) {
    result_.graph.metadata = source.metadata;
    result_.graph.inputs = source.inputs;
    result_.graph.outputs = source.outputs;
    result_.graph.tensors = source.tensors;
  }

  QuantizeResult run() {
    Graph& graph = result_.graph;
    // --quantize-io: an int8 input "<name>_q8" replaces the float one, which a dequantize
    // recreates if a float node reads it.
    for (auto& name : graph.inputs) {
      if (options_.quantize_io && ranges_.count(name) && graph.tensor(name).dtype == DType::f32) {
        const std::string q8 = passes::unique_tensor_name(graph, name + "_q8");
        graph.add_tensor({.name = q8, .dtype = DType::i8, .shape = graph.tensor(name).shape, .quant = params_of(name)});
        result_.int8_tensor[name] = q8;
        name = q8;
      } else {
        float_available_.insert(name);
      }
    }
    for (const Node& node : source_.nodes) {
      if (auto reason = float_reason(node)) {
        emit_float(node, *reason);
      } else {
        emit_int8(node);
      }
    }
    finish_outputs();
    graph.remove_unused_tensors();
    graph.infer_shapes();
    graph.validate();
    return std::move(result_);
  }

 private:
  QuantParams params_of(const std::string& tensor) const {
    const Range& range = ranges_.find(tensor)->second;
    return activation_params(range.lo, range.hi);
  }

  bool is_int8(const std::string& tensor) const { return result_.int8_tensor.count(tensor) > 0; }

  // Why `node` stays float32, or nullopt when it becomes int8.
  std::optional<std::string> float_reason(const Node& node) const {
    if (keeps_fp32(options_, node)) return "--keep-fp32";
    const bool compute = has_int8_compute(node.op);
    if (!compute && !is_int8_data_movement(node.op)) return "no int8 kernel";
    for (const auto& output : node.outputs)
      if (source_.tensor(output).dtype != DType::f32) return "output is not float32";
    if (!compute) {
      if (!is_int8(node.inputs[0])) return "input is float32";
      return std::nullopt;
    }
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& input = node.inputs[i];
      if (input.empty()) continue;
      if (source_.tensor(input).dtype != DType::f32) return "input is not float32";
      if (i < activation_inputs(node)) {
        if (!is_int8(input) && !ranges_.count(input)) return fmt::format("input '{}' was not calibrated", input);
      } else if (!source_.tensor(input).is_constant()) {
        return fmt::format("weight '{}' is not constant", input);
      }
    }
    if (activation_inputs(node) == 1 && source_.tensor(node.inputs[0]).is_constant()) return "input is constant";
    if (node.op == "add" || node.op == "mul" || node.op == "concat")
      for (const auto& input : node.inputs)
        if (source_.tensor(input).is_constant()) return "constant operand";
    if (!ranges_.count(node.outputs[0])) return "output was not calibrated";
    if (node.op == "concat") {
      const QuantParams output = params_of(node.outputs[0]);
      for (const auto& input : node.inputs) {
        const auto it = result_.int8_tensor.find(input);
        const QuantParams params = it != result_.int8_tensor.end() ? *result_.graph.tensor(it->second).quant : params_of(input);
        if (params.scales != output.scales || params.zero_points != output.zero_points)
          return fmt::format("input '{}' has other int8 parameters than the output", input);
      }
    }
    return std::nullopt;
  }

  // The int8 version of float tensor `tensor`, inserting a quantize node if there is none yet.
  std::string int8_of(const std::string& tensor) {
    if (auto it = result_.int8_tensor.find(tensor); it != result_.int8_tensor.end()) return it->second;
    Graph& graph = result_.graph;
    const std::string name = passes::unique_tensor_name(graph, tensor + "_q8");
    graph.add_tensor({.name = name, .dtype = DType::i8, .shape = graph.tensor(tensor).shape, .quant = params_of(tensor)});
    graph.nodes.push_back({passes::unique_node_name(graph, "quantize_" + tensor), "quantize", {tensor}, {name}, {}});
    ++result_.quantize_nodes;
    result_.int8_tensor[tensor] = name;
    return name;
  }

  // Makes float tensor `tensor` available, inserting a dequantize of its int8 version.
  void need_float(const std::string& tensor) {
    if (tensor.empty() || float_available_.count(tensor) || !is_int8(tensor)) return;
    Graph& graph = result_.graph;
    graph.nodes.push_back(
        {passes::unique_node_name(graph, "dequantize_" + tensor), "dequantize", {result_.int8_tensor[tensor]}, {tensor}, {}});
    ++result_.dequantize_nodes;
    float_available_.insert(tensor);
  }

  void emit_float(const Node& node, const std::string& reason) {
    for (const auto& input : node.inputs) need_float(input);
    result_.graph.nodes.push_back(node);
    for (const auto& output : node.outputs) float_available_.insert(output);
    if (!is_int8_data_movement(node.op)) result_.float_nodes.push_back({node.name, node.op, reason});
  }

  std::string add_constant(const std::string& base, DType dtype, const Shape& shape, const void* data, size_t bytes,
                           std::optional<QuantParams> quant) {
    Graph& graph = result_.graph;
    const std::string name = passes::unique_tensor_name(graph, base);
    graph.add_tensor({.name = name, .dtype = dtype, .shape = shape, .quant = std::move(quant),
                      .data = ConstData::copy_of(data, bytes)});
    return name;
  }

  // Replaces the float weights and bias of conv2d / linear `node` in `q` by int8 weights with
  // per-channel scales floored for this node's input and output scales, and an int32 bias.
  void quantize_weights_of(const Node& node, Node& q, float y_scale) {
    const TensorInfo& weight = source_.tensor(node.inputs[1]);
    const auto values = passes::constant_floats(source_, node.inputs[1]).value();
    for (float v : values)
      if (!std::isfinite(v)) fail(ExitCode::invalid_input, "node '{}': weights '{}' hold {}", node.name, weight.name, v);
    const bool has_bias = node.inputs.size() > 2 && !node.inputs[2].empty();
    const std::vector<float> bias = has_bias ? passes::constant_floats(source_, node.inputs[2]).value()
                                             : std::vector<float>(static_cast<size_t>(weight.shape[0]), 0.0f);
    const float x_scale = result_.graph.tensor(q.inputs[0]).quant->scales[0];
    std::vector<float> floors;
    for (float b : bias) floors.push_back(weight_scale_floor(x_scale, y_scale, b));
    const QuantizedWeights w = quantize_weights(values, weight.shape[0], floors);
    q.inputs[1] = add_constant(node.inputs[1] + "_q8", DType::i8, weight.shape, w.values.data(), w.values.size(), w.params);
    if (!has_bias) return;
    const auto b = quantize_bias(bias, x_scale, w.params.scales);
    QuantParams bias_params{.axis = 0};
    for (float s : w.params.scales) {
      bias_params.scales.push_back(x_scale * s);
      bias_params.zero_points.push_back(0);
    }
    q.inputs[2] = add_constant(node.inputs[2] + "_q32", DType::i32, source_.tensor(node.inputs[2]).shape, b.data(),
                               b.size() * sizeof(int32_t), bias_params);
  }

  void emit_int8(const Node& node) {
    Graph& graph = result_.graph;
    Node q = node;
    const size_t activations = has_int8_compute(node.op) ? activation_inputs(node) : 1;
    for (size_t i = 0; i < activations; ++i) q.inputs[i] = int8_of(node.inputs[i]);
    // Max pooling and data movement keep their input's parameters (tied_ranges gave them the
    // same range; taking the input's also covers an input quantized with --quantize-io).
    std::optional<QuantParams> output_params;
    if (node.op == "max_pool2d" || is_int8_data_movement(node.op))
      output_params = graph.tensor(q.inputs[0]).quant;
    else if (node.op == "sigmoid")
      output_params = sigmoid_output_params();
    else
      output_params = params_of(node.outputs[0]);
    if (node.op == "conv2d" || node.op == "linear") quantize_weights_of(node, q, output_params->scales[0]);
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const std::string& output = node.outputs[o];
      const std::string name = passes::unique_tensor_name(graph, output + "_q8");
      graph.add_tensor({.name = name, .dtype = DType::i8, .shape = source_.tensor(output).shape, .quant = output_params});
      q.outputs[o] = name;
      result_.int8_tensor[output] = name;
    }
    graph.nodes.push_back(std::move(q));
  }

  void finish_outputs() {
    Graph& graph = result_.graph;
    for (auto& output : graph.outputs) {
      if (float_available_.count(output) || !is_int8(output)) continue;
      if (options_.quantize_io)
        output = result_.int8_tensor[output];
      else
        need_float(output);
    }
  }

  const Graph& source_;
  const std::map<std::string, Range, std::less<>> ranges_;  // calibrated, tied groups widened
  const QuantizeOptions& options_;
  QuantizeResult result_;
  std::unordered_set<std::string> float_available_;
};

}  // namespace

QuantizeResult quantize_graph(const Graph& graph, const std::map<std::string, Range, std::less<>>& ranges,
                              const QuantizeOptions& options) {
  for (const auto& name : options.keep_fp32) {
    if (name.starts_with(kOpPrefix)) {
      const std::string_view op = std::string_view(name).substr(kOpPrefix.size());
      if (!find_op(op)) fail(ExitCode::usage, "--keep-fp32: '{}' is not an mt op type", op);
      continue;
    }
    bool found = false;
    for (const auto& node : graph.nodes) found = found || node.name == name;
    if (!found) fail(ExitCode::usage, "--keep-fp32: the model has no node '{}'", name);
  }
  return Quantizer(graph, ranges, options).run();
}

}  // namespace mt::quant
