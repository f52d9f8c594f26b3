// Planning int8 conv2d and linear onto the AVX512-VNNI kernels of int8_vnni.h: weights packed once
// (bias folded with the input zero point, one float multiplier x_scale * w_scale / y_scale per
// output channel, formed as the reference forms it) by pack_int8_weights, here or by mt-prepack,
// whose stored form is then read in place (packed_forms.h); the fused clamp from the node's act_min /
// act_max. The GEMMs read their int8 input in place (arena memory, which may be over-read), or on
// CPUs where that is cheaper a copy flipped to unsigned in a scratch buffer (int8_flip_per_layer).
//
// Plan-time fusion: an int8 add that alone reads a GEMM-path conv's output (a residual connection:
// ResNet's blocks, MobileNet's inverted residuals), whose other operand has the same shape and is
// computed before the conv, runs inside the conv's output stage (Int8ResidualAdd, exact to the
// reference add) instead of as XNNPACK's qs8 add: the conv's output is never stored, and the add
// costs no step and no wake of the thread pool (on 2 threads XNNPACK's add ran slower than on 1).
// The model is unchanged; MT_CPU_INT8_VNNI=0 plans the two nodes apart as before.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/max_pool.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "kernels/cpu/plan/prepack.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/ops/ops_int8.h"

namespace mt::cpu {
namespace {

// The per-output-channel multipliers and the output step shared by every kernel.
std::vector<float> multipliers_of(const Graph& graph, const Node& node) {
  const Int8Params x = int8_params(graph.tensor(node.inputs[0])), y = int8_params(graph.tensor(node.outputs[0]));
  std::vector<float> m = int8_weight_scales(graph.tensor(node.inputs[1]));
  for (float& v : m) v = x.scale * v / y.scale;
  return m;
}

Int8Output output_of(const Graph& graph, const Node& node) {
  const Int8Params y = int8_params(graph.tensor(node.outputs[0]));
  const auto [lo, hi] = int8_output_bounds(node, y);
  return Int8Output{.zero_point = y.zero_point, .low = lo, .high = hi};
}
Int8Output output_of(NodeContext& c) { return output_of(c.graph(), c.node()); }

const int32_t* bias_of(const Graph& graph, const Node& node) {
  const bool bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  return bias ? graph.tensor(node.inputs[2]).data.as<int32_t>().data() : nullptr;
}

int32_t input_zero(const Graph& graph, const Node& node) {
  return int8_params(graph.tensor(node.inputs[0])).zero_point;
}

// `bytes` of plan memory holding the input zero point: the padding pixel (flipped for the GEMM).
const int8_t* padding_pixel(NodeContext& c, size_t bytes, bool flipped) {
  auto* p = static_cast<int8_t*>(c.keep(bytes));
  const auto zero = static_cast<uint8_t>(int8_params(c.input_info(0)).zero_point);
  std::fill_n(p, bytes, static_cast<int8_t>(flipped ? zero ^ 0x80 : zero));
  return p;
}

// How a GEMM reads input 0 (in `layout`): the int8 bytes, flipped by its micro-kernel, or on CPUs
// where a separate pass is cheaper (int8_flip_per_layer) a copy flipped by int8_flip into scratch.
// add_step appends the step's pointers: the input, then the scratch when there is one.
struct GemmInput {
  Value x;
  std::optional<Value> flipped;
  size_t bytes = 0;
};

GemmInput gemm_input(NodeContext& c, const Layout& layout) {
  GemmInput in{.x = c.xnn_input(0, layout)};
  in.bytes = count_of(in.x);
  if (int8_flip_per_layer()) in.flipped = c.scratch(in.bytes);
  return in;
}

// The GEMM input at run time from the step's pointers (x at p[first], its flipped copy after it).
Int8GemmInput read_input(const GemmInput& in, Pointers p, size_t first, ThreadPool* pool) {
  if (!in.flipped) return {.data = p[first], .flipped = false};
  auto* u = static_cast<uint8_t*>(p[first + 1]);
  int8_flip(static_cast<const int8_t*>(p[first]), u, in.bytes, pool);
  return {.data = u, .flipped = true};
}

size_t to_size(int64_t v) { return static_cast<size_t>(v); }

// A step's fused add: its pointer at `index` is the residual, if the step has one.
Int8Residual residual_of(const Int8ResidualAdd& add, Pointers p, size_t index) {
  return p.size() > index ? Int8Residual{&add, static_cast<const int8_t*>(p[index])} : Int8Residual{};
}

// The add fused into this conv (see the header comment), if there is one to fuse.
struct FusedAdd {
  size_t node = 0;       // the add's index
  std::string residual;  // its other operand
  Int8ResidualAdd add;
};

std::optional<FusedAdd> fusable_add(NodeContext& c) {
  const std::optional<size_t> consumer = c.sole_consumer(0);
  if (!consumer) return std::nullopt;
  const Graph& graph = c.graph();
  const Node& add = graph.nodes[*consumer];
  // check_add_int8: the add itself would run here (all int8, per-tensor), so the model plans alike
  // with and without the fusion.
  if (add.op != "add" || add.inputs.size() != 2 || check_add_int8(graph, add)) return std::nullopt;
  const std::string& own = c.node().outputs[0];
  const std::string& residual = add.inputs[0] == own ? add.inputs[1] : add.inputs[0];
  const Shape& shape = c.output_info(0).shape;
  if (graph.tensor(residual).shape != shape || graph.tensor(add.outputs[0]).shape != shape ||
      !c.available(residual))
    return std::nullopt;
  const Int8Params conv = int8_params(c.output_info(0)), r = int8_params(graph.tensor(residual));
  const Int8Params y = int8_params(graph.tensor(add.outputs[0]));
  const auto [lo, hi] = int8_output_bounds(add, y);
  // The reference add's multipliers, formed as it forms them.
  return FusedAdd{.node = *consumer, .residual = residual,
                  .add = {.c_multiplier = conv.scale / y.scale, .r_multiplier = r.scale / y.scale,
                          .r_zero = r.zero_point, .out = {.zero_point = y.zero_point, .low = lo, .high = hi}}};
}

// An int8 hardswish, silu or hardsigmoid that alone reads this depthwise conv's output: its table,
// applied by the conv to each output row once complete (no step, no pass over the tensor from
// memory, no wake of the pool of its own). Not for the GEMM convs: their 8-row blocks are read back
// right after their 16-byte masked stores, which stalled the loads (EfficientNet's 1x1 convs +88%
// against 30 us for the separate silu; depthwise rows: even, and one step fewer).
struct FusedActivation {
  size_t node = 0;
  const int8_t* table = nullptr;  // plan memory
};

std::optional<FusedActivation> fusable_activation(NodeContext& c) {
  const std::optional<size_t> consumer = c.sole_consumer(0);
  if (!consumer) return std::nullopt;
  const Node& node = c.graph().nodes[*consumer];
  const std::optional<std::array<int8_t, 256>> table = int8_activation_table(c.graph(), node);
  if (!table || c.graph().tensor(node.outputs[0]).shape != c.output_info(0).shape) return std::nullopt;
  auto* kept = static_cast<int8_t*>(c.keep(table->size()));
  std::copy(table->begin(), table->end(), kept);
  return FusedActivation{.node = *consumer, .table = kept};
}

// Output 0 in NHWC, or the fused activation's output (see fusable_activation).
Value conv_output(NodeContext& c, const std::optional<FusedActivation>& activation) {
  return activation ? c.fused_output(activation->node, 0, nhwc_layout()) : c.output(0, nhwc_layout());
}

// The kernels an int8 conv2d runs on; int8_conv2d_kernel picks one for planning and for mt-prepack.
enum class Int8ConvKernel { depthwise, gemm, gemm_gathered, xnnpack };

Int8ConvKernel int8_conv2d_kernel(const Graph& graph, const Node& node, const KernelPaths& paths) {
  if (!paths.int8_vnni) return Int8ConvKernel::xnnpack;
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  const Shape& ws = graph.tensor(node.inputs[1]).shape;
  const size_t groups = to_size(attr_int(node, "group")), channels = to_size(xs[1]), out_channels = to_size(ws[0]);
  const size_t kh = to_size(ws[2]), kw = to_size(ws[3]);
  if (groups == channels && out_channels == channels && ws[1] == 1)
    return kh == kw && (kh == 3 || kh == 5) ? Int8ConvKernel::depthwise : Int8ConvKernel::xnnpack;
  if (groups != 1 || !int8_conv_fits(kh, kw)) return Int8ConvKernel::xnnpack;
  return int8_conv_gathers(kh, kw, channels) ? Int8ConvKernel::gemm_gathered : Int8ConvKernel::gemm;
}

}  // namespace

std::optional<CpuLayout> conv2d_int8_weight_layout(const Graph& graph, const Node& node, size_t input,
                                                   const KernelPaths& paths) {
  if (input != 1) return std::nullopt;
  switch (int8_conv2d_kernel(graph, node, paths)) {
    case Int8ConvKernel::depthwise: return CpuLayout::vnni_depthwise;
    case Int8ConvKernel::gemm: return CpuLayout::vnni_gemm;
    case Int8ConvKernel::gemm_gathered: return CpuLayout::vnni_gemm_gathered;
    case Int8ConvKernel::xnnpack: break;
  }
  return std::nullopt;
}

std::optional<CpuLayout> linear_int8_weight_layout(const Graph&, const Node&, size_t input, const KernelPaths& paths) {
  if (input == 1 && paths.int8_vnni) return CpuLayout::vnni_gemm;
  return std::nullopt;
}

void pack_int8_weights(const Graph& graph, const Node& node, CpuLayout layout, void* memory) {
  const TensorInfo& w = graph.tensor(node.inputs[1]);
  const std::vector<float> multipliers = multipliers_of(graph, node);
  const auto n = to_size(w.shape[0]), kernel = w.shape.size() == 4 ? to_size(w.shape[2] * w.shape[3]) : 1;
  const ConstData ohwi = w.shape.size() == 4 ? ohwi_weights(w) : w.data;  // a depthwise kernel's OIHW is OHWI
  const int8_t* values = ohwi.as<int8_t>().data();
  switch (layout) {
    case CpuLayout::vnni_depthwise:
      pack_int8_depthwise(memory, values, bias_of(graph, node), multipliers.data(), to_size(w.shape[2]), n,
                          input_zero(graph, node), output_of(graph, node));
      return;
    case CpuLayout::vnni_gemm:
    case CpuLayout::vnni_gemm_gathered: {
      // Gathered convs pack the OHWI rows as one run of taps x channels.
      const bool gathered = layout == CpuLayout::vnni_gemm_gathered;
      const size_t channels = to_size(w.shape[1]);
      pack_int8_gemm(memory, values, bias_of(graph, node), multipliers.data(), gathered ? 1 : kernel,
                     gathered ? kernel * channels : channels, n, input_zero(graph, node), output_of(graph, node));
      return;
    }
    default: fail(ExitCode::failure, "internal: int8 weights in layout '{}'", cpu_layout_tag(layout));
  }
}

namespace {

// The pointwise conv (1x1, stride 1, no padding, one group, on the GEMM) that alone reads this
// depthwise conv's output (or its fused activation's), if the two can run as one step
// (int8_depthwise_pointwise), with conv fusion on (MT_CPU_CONV_FUSION).
std::optional<size_t> fusable_pointwise(NodeContext& c, const std::optional<FusedActivation>& activation) {
  if (!c.conv_fusion()) return std::nullopt;
  const Graph& graph = c.graph();
  const std::string& mid = activation ? graph.nodes[activation->node].outputs[0] : c.node().outputs[0];
  const std::optional<size_t> consumer = c.sole_consumer_of(mid);
  if (!consumer) return std::nullopt;
  const Node& node = graph.nodes[*consumer];
  if (node.op != "conv2d" || node.inputs[0] != mid || check_conv2d_int8(graph, node) ||
      int8_conv2d_kernel(graph, node, c.paths()) != Int8ConvKernel::gemm)
    return std::nullopt;
  const Shape& ws = graph.tensor(node.inputs[1]).shape;
  const auto& pads = attr_ints(node, "pads");
  if (ws[2] != 1 || ws[3] != 1 || attr_ints(node, "strides") != std::vector<int64_t>{1, 1} ||
      !std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; }))
    return std::nullopt;
  return consumer;
}

// A global average pool on the VNNI kernel that reads `tensor`, which the depthwise conv being
// planned computes (a squeeze-excitation's), with conv fusion on: the conv forms its sums.
std::optional<size_t> summed_pool(NodeContext& c, const std::string& tensor) {
  if (!c.conv_fusion()) return std::nullopt;
  for (const size_t consumer : c.consumers_of(tensor)) {
    const Node& node = c.graph().nodes[consumer];
    if (node.op == "global_avg_pool" && node.inputs[0] == tensor && !check_global_avg_pool_int8(c.graph(), node))
      return consumer;
  }
  return std::nullopt;
}

// Plans the depthwise conv being planned, its fused activations and the pointwise conv `pointwise`
// (with the add it fuses in turn, fusable_add) as one int8_depthwise_pointwise step.
void plan_depthwise_pointwise(NodeContext& c, Int8DepthwisePointwise fused, size_t pointwise,
                              const PackedConvShape& shape, const Value& x, const int8_t* padding,
                              const std::optional<FusedActivation>& activation, size_t threads) {
  NodeContext pc = c.context_of(pointwise);
  const size_t out_channels = to_size(pc.input_info(1).shape[0]);
  fused.pointwise =
      int8_gemm_view(packed_weights(pc, 1, CpuLayout::vnni_gemm), 1, shape.channels, out_channels, output_of(pc));
  // The depthwise output (the pointwise conv's input) is never stored: each thread keeps its rows of
  // it in scratch.
  if (activation) c.fuse_through(activation->node);
  const std::optional<FusedAdd> add = fusable_add(pc);
  // Pointers: x, scratch, y, [the fused add's residual].
  std::vector<Value> values{x, c.scratch(int8_depthwise_pointwise_scratch_bytes(shape, threads, fused.fusion))};
  if (add) {
    c.fuse_through(pointwise);
    values.push_back(c.fused_output(add->node, 0, nhwc_layout()));
    values.push_back(c.tensor(add->residual, nhwc_layout()));
  } else {
    values.push_back(c.fused_output(pointwise, 0, nhwc_layout()));
  }
  // ShuffleNet: the channel shuffle of this output and the concat's other inputs (computed before),
  // run by each thread on the pixels it has computed.
  const FusedShuffle shuffle =
      fuse_shuffle_after(c, add ? c.graph().nodes[add->node].outputs[0] : pc.node().outputs[0], values);
  const Int8ResidualAdd residual = add ? add->add : Int8ResidualAdd{};
  const bool has_add = add.has_value();
  c.add_kernel(values, [fused, shape, padding, threads, residual, has_add, shuffle](Pointers p, ThreadPool* pool) {
    const ShuffleTail tail = shuffle.at(p);
    int8_depthwise_pointwise(
        fused, shape, static_cast<const int8_t*>(p[0]), padding, p[1], threads, static_cast<int8_t*>(p[2]),
        has_add ? Int8Residual{&residual, static_cast<const int8_t*>(p[3])} : Int8Residual{}, shuffle_tail(tail), pool);
  });
}

PackedConvShape conv_shape_of(const NodeContext& c) {
  const Node& node = c.node();
  const Shape xs = c.input_info(0).shape, ws = c.input_info(1).shape, ys = c.output_info(0).shape;
  const auto& strides = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  const auto& dilations = attr_ints(node, "dilations");
  return PackedConvShape{.n = to_size(xs[0]),
                         .h = to_size(xs[2]),
                         .w = to_size(xs[3]),
                         .channels = to_size(xs[1]),
                         .out_h = to_size(ys[2]),
                         .out_w = to_size(ys[3]),
                         .kernel_h = to_size(ws[2]),
                         .kernel_w = to_size(ws[3]),
                         .stride_h = to_size(strides[0]),
                         .stride_w = to_size(strides[1]),
                         .dilation_h = to_size(dilations[0]),
                         .dilation_w = to_size(dilations[1]),
                         .pad_top = pads[0],
                         .pad_left = pads[1]};
}

// Whether the pointwise conv being planned (on the GEMM, no add fused) is left to the depthwise conv
// that alone reads its output, directly or through an activation that conv takes
// (depthwise_takes_input_lookup), to compute as it reads it: conv fusion on, and
// int8_depthwise_expand_pays for that conv.
bool defers_to_depthwise(NodeContext& c) {
  if (!c.conv_fusion()) return false;
  const Graph& graph = c.graph();
  std::optional<size_t> consumer = c.sole_consumer(0);
  if (!consumer) return false;
  if (int8_activation_table(graph, graph.nodes[*consumer])) {  // the activation defers to the conv after it
    NodeContext activation = c.context_of(*consumer);
    const std::optional<size_t> conv = activation.sole_consumer(0);
    if (!conv || !depthwise_takes_input_lookup(activation, *conv)) return false;
    consumer = conv;
  } else if (!depthwise_takes_input_lookup(c, *consumer)) {  // the same conditions, reading this output
    return false;
  }
  return int8_depthwise_expand_pays(conv_shape_of(c.context_of(*consumer)),
                                    static_cast<size_t>(std::max(1, c.threads())));
}

// The expanding conv a depthwise conv computes (DeferredExpand) with its input x, into `fusion`.
void take_expand(NodeContext& c, const DeferredExpand& expand, Int8DepthwiseFusion& fusion) {
  NodeContext e = c.context_of(expand.node);
  const size_t channels = to_size(e.input_info(0).shape[1]), n = to_size(e.input_info(1).shape[0]);
  fusion.expand = int8_gemm_view(packed_weights(e, 1, CpuLayout::vnni_gemm), 1, channels, n, output_of(e));
  fusion.expand_channels = channels;
}

}  // namespace

bool plan_conv2d_int8_vnni(NodeContext& c) {
  const Int8ConvKernel kernel = int8_conv2d_kernel(c.graph(), c.node(), c.paths());
  if (kernel == Int8ConvKernel::xnnpack) return false;
  const Node& node = c.node();
  const Shape ws = c.input_info(1).shape;
  const auto& strides = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  const PackedConvShape shape = conv_shape_of(c);
  const size_t channels = shape.channels, out_channels = to_size(ws[0]);
  const size_t kh = shape.kernel_h, kw = shape.kernel_w;
  if (kernel == Int8ConvKernel::depthwise) {
    const PackedInt8Depthwise w =
        int8_depthwise_view(packed_weights(c, 1, CpuLayout::vnni_depthwise), kh, channels, output_of(c));
    const int8_t* padding = padding_pixel(c, channels, false);
    const size_t threads = static_cast<size_t>(std::max(1, c.threads()));
    // The activation before the conv, left to it by its planner (depthwise_takes_input_lookup), and
    // the expanding conv before that (defers_to_depthwise).
    const DeferredLookup* deferred = c.deferred_lookup(0);
    const DeferredExpand* expand = c.deferred_expand_of(deferred ? deferred->x : node.inputs[0]);
    const std::optional<FusedActivation> activation = fusable_activation(c);
    Int8DepthwiseFusion fusion{.input_lookup = deferred ? deferred->table : nullptr,
                               .lookup = activation ? activation->table : nullptr};
    if (expand) take_expand(c, *expand, fusion);
    const Value x = expand ? expand->x : deferred ? c.tensor(deferred->x, nhwc_layout()) : c.input(0, nhwc_layout());
    if (const std::optional<size_t> pointwise = fusable_pointwise(c, activation)) {
      plan_depthwise_pointwise(c, {.depthwise = w, .fusion = fusion, .pointwise = {}}, *pointwise, shape, x, padding,
                               activation, threads);
      return true;
    }
    const Value y = conv_output(c, activation);
    // arena: 64-byte aligned
    const Value scratch = c.scratch(int8_depthwise_scratch_bytes(shape, threads, fusion));
    std::vector<Value> values{x, y, scratch};
    const std::string& out = activation ? c.graph().nodes[activation->node].outputs[0] : node.outputs[0];
    if (summed_pool(c, out)) {
      values.push_back(c.scratch(shape.n * threads * channels * sizeof(int32_t)));
      c.provide_pooled_sums(out, PooledSums{.sums = values.back(), .slots = threads});
    }
    c.add_kernel(values, [w, shape, padding, threads, fusion](Pointers p, ThreadPool* pool) {
      int8_depthwise(w, shape, static_cast<const int8_t*>(p[0]), padding, static_cast<int8_t*>(p[1]), p[2], threads,
                     pool, fusion, p.size() > 3 ? static_cast<int32_t*>(p[3]) : nullptr);
    });
    return true;
  }
  const bool pointwise = kh * kw == 1 && strides[0] == 1 && strides[1] == 1 &&
                         std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
  const std::optional<FusedAdd> fused = fusable_add(c);
  if (pointwise && !fused && defers_to_depthwise(c)) {  // the depthwise conv after it computes its rows
    c.defer_expand(c.xnn_input(0, nhwc_layout()));
    return true;
  }
  // Gathered convs pack the OHWI rows as one run of taps x channels.
  const bool gathered = kernel == Int8ConvKernel::gemm_gathered;
  const size_t taps = gathered ? 1 : kh * kw, run = gathered ? kh * kw * channels : channels;
  const PackedInt8Gemm w =
      int8_gemm_view(packed_weights(c, 1, gathered ? CpuLayout::vnni_gemm_gathered : CpuLayout::vnni_gemm), taps, run,
                     out_channels, output_of(c));
  const GemmInput in = gemm_input(c, nhwc_layout());
  // Pointers: x, y, [x flipped], [the fused add's residual].
  std::vector<Value> values{in.x, fused ? c.fused_output(fused->node, 0, nhwc_layout()) : c.output(0, nhwc_layout())};
  if (in.flipped) values.push_back(*in.flipped);
  const size_t residual_index = values.size();
  if (fused) values.push_back(c.tensor(fused->residual, nhwc_layout()));
  const Int8ResidualAdd add = fused ? fused->add : Int8ResidualAdd{};
  if (pointwise) {  // one GEMM over the pixels
    const size_t pixels = in.bytes / channels;
    c.add_kernel(values, [w, in, pixels, channels, out_channels, add, residual_index](Pointers p, ThreadPool* pool) {
      int8_gemm(w, pixels, read_input(in, p, 0, pool), channels, static_cast<int8_t*>(p[1]), out_channels, pool,
                residual_of(add, p, residual_index));
    });
    return true;
  }
  const int8_t* padding = padding_pixel(c, (channels + 3) / 4 * 4, in.flipped.has_value());
  c.add_kernel(values, [w, shape, padding, in, add, residual_index](Pointers p, ThreadPool* pool) {
    int8_conv(w, shape, read_input(in, p, 0, pool), padding, static_cast<int8_t*>(p[1]), pool,
              residual_of(add, p, residual_index));
  });
  return true;
}

// Every row of X (row-major) is one row of the GEMM.
void plan_linear_int8_vnni(NodeContext& c) {
  const Shape& ws = c.input_info(1).shape;  // N, K
  const size_t n = to_size(ws[0]), k = to_size(ws[1]);
  const PackedInt8Gemm w = int8_gemm_view(packed_weights(c, 1, CpuLayout::vnni_gemm), 1, k, n, output_of(c));
  const size_t rank = c.input_info(0).shape.size();
  const GemmInput in = gemm_input(c, identity_layout(rank));
  std::vector<Value> values{in.x, c.output(0, identity_layout(rank))};
  if (in.flipped) values.push_back(*in.flipped);
  const size_t rows = k == 0 ? 0 : in.bytes / k;
  c.add_kernel(values, [w, in, rows, k, n](Pointers p, ThreadPool* pool) {
    int8_gemm(w, rows, read_input(in, p, 0, pool), k, static_cast<int8_t*>(p[1]), n, pool);
  });
}

namespace {

// How one operand of a broadcast op spans the output (physical shapes): its `inner` trailing values
// equal the output's, repeated over the `repeat` rows of size 1 in front of them, for each of
// `outer` leading indices it shares with the output. An operand of the output's shape: 1, 1, count.
struct RowBroadcast {
  size_t outer = 1, repeat = 1, inner = 1;
};

std::optional<RowBroadcast> row_broadcast(const Shape& out, const Shape& operand) {
  size_t t = out.size();
  while (t > 0 && operand[t - 1] == out[t - 1]) --t;  // dims [t, rank) shared
  size_t s = t;
  while (s > 0 && operand[s - 1] == 1) --s;  // dims [s, t) broadcast
  RowBroadcast rows;
  for (size_t d = 0; d < out.size(); ++d) {
    if (d < s && operand[d] != out[d]) return std::nullopt;
    (d < s ? rows.outer : d < t ? rows.repeat : rows.inner) *= to_size(out[d]);
  }
  return rows;
}

}  // namespace

bool plan_mul_int8_vnni(NodeContext& c) {
  const BroadcastOperands planned = plan_broadcast_operands(c);
  for (size_t full : {0, 1}) {
    const size_t other = 1 - full;
    if (planned.physical[full] != planned.out_physical) continue;
    const std::optional<RowBroadcast> rows = row_broadcast(planned.out_physical, planned.physical[other]);
    // Rows of fewer than 16 values would leave most of each vector empty: XNNPACK's.
    if (!rows || (rows->repeat > 1 && rows->inner < 16)) continue;
    const Int8Params a = int8_params(c.input_info(full)), b = int8_params(c.input_info(other));
    const Int8Params y = int8_params(c.output_info(0));
    // The reference forms input 0's scale times input 1's, over y's: the same float either way round.
    const Int8MulParams params{.a_zero = a.zero_point,
                               .b_zero = b.zero_point,
                               .multiplier = a.scale * b.scale / y.scale,
                               .out = {.zero_point = y.zero_point, .low = -128, .high = 127}};
    const Value av = c.input(full, trailing_layout(planned.layout, c.input_info(full).shape.size()));
    const Value bv = c.input(other, trailing_layout(planned.layout, c.input_info(other).shape.size()));
    const Value yv = c.output(0, planned.layout);
    const RowBroadcast r = *rows;
    c.add_kernel({av, bv, yv}, [r, params](Pointers p, ThreadPool* pool) {
      int8_mul(static_cast<const int8_t*>(p[0]), static_cast<const int8_t*>(p[1]), static_cast<int8_t*>(p[2]), r.outer,
               r.repeat, r.inner, params, pool);
    });
    return true;
  }
  return false;
}

bool depthwise_takes_input_lookup(NodeContext& c, size_t consumer) {
  const Graph& graph = c.graph();
  const Node& node = graph.nodes[consumer];
  return c.conv_fusion() && node.op == "conv2d" && node.inputs[0] == c.node().outputs[0] &&
         !check_conv2d_int8(graph, node) && int8_conv2d_kernel(graph, node, c.paths()) == Int8ConvKernel::depthwise;
}

void plan_global_avg_pool_int8_vnni(NodeContext& c) {
  const Shape& shape = c.input_info(0).shape;
  const Int8Params x = int8_params(c.input_info(0)), y = int8_params(c.output_info(0));
  const size_t batch = to_size(shape[0]), channels = to_size(shape[1]), pixels = to_size(shape[2] * shape[3]);
  // The reference's multiplier, formed as it forms it.
  const float multiplier = x.scale / (static_cast<float>(pixels) * y.scale);
  const Int8Output out{.zero_point = y.zero_point, .low = -128, .high = 127};
  const int32_t x_zero = x.zero_point;
  if (const PooledSums* formed = c.pooled_sums(0)) {  // the depthwise conv that computed x summed it
    const size_t slots = formed->slots;
    c.add_kernel({formed->sums, c.output(0, nhwc_layout())}, [=](Pointers p, ThreadPool*) {
      int8_global_avg_pool_of_sums(static_cast<const int32_t*>(p[0]), slots, static_cast<int8_t*>(p[1]), batch, pixels,
                                   channels, x_zero, multiplier, out);
    });
    return;
  }
  const Value xv = c.input(0, nhwc_layout());
  const Value yv = c.output(0, nhwc_layout());
  const size_t threads = static_cast<size_t>(std::max(1, c.threads()));
  const Value scratch = c.scratch(int8_global_avg_pool_scratch_bytes(batch, channels, threads));
  c.add_kernel({xv, yv, scratch}, [=](Pointers p, ThreadPool* pool) {
    int8_global_avg_pool(static_cast<const int8_t*>(p[0]), static_cast<int8_t*>(p[1]), batch, pixels, channels, x_zero,
                         multiplier, out, p[2], threads, pool);
  });
}

// engines/max_pool.h rather than XNNPACK's: a little faster (ShuffleNet's 3x3 pool of 24 x 112 x
// 112, 19 against 21 us at 1 thread) and on the plan's own threads: an XNNPACK step parks them and
// wakes XNNPACK's, and this was the only one in ShuffleNet's int8 graph.
void plan_max_pool2d_int8_vnni(NodeContext& c) {
  const PackedConvShape shape = max_pool_shape(c);
  const Value x = c.input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  c.add_kernel({x, y}, [shape](Pointers p, ThreadPool* pool) {
    max_pool(shape, static_cast<const int8_t*>(p[0]), static_cast<int8_t*>(p[1]), pool);
  });
}

}  // namespace mt::cpu
