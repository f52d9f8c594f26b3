// conv2d and conv_transpose2d as XNNPACK NHWC operators. The graph's OIHW weights are reordered
// into a temporary OHWI (per group) copy that XNNPACK packs at creation and that is freed right
// after (prepacked models store OHWI already): a run touches only the packed weights. Depthwise
// convolutions are recognised by XNNPACK itself (one input and one output channel per group).
// Large weights are split into several operators by output channel (gemm_slices.h). On AVX-512
// CPUs convs with one group run on our own packed GEMM (packed_gemm.h) instead: 1x1 stride-1
// ones as plain GEMMs, others as indirect GEMMs, their weights read in place where mt-prepack
// stored them packed (packed_forms.h). 3x3 stride-1 convolutions large enough to pay go to
// winograd_conv.cpp instead, and on AVX-512 CPUs 3x3 and 5x5 depthwise ones to our own
// depthwise_conv.h and those of 1 to 4 input channels (a network's stem) to stem_conv.h. Our own
// engines also run the hardswish / silu and residual add after the conv in their output stage,
// and a pointwise conv folds a per-channel gate on its input into its weights (conv_fusion.h). conv2d_kernel is the choice, for planning and for mt-prepack.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu/engines/conv_gemm.h"
#include "kernels/cpu/engines/conv_transpose_direct.h"
#include "kernels/cpu/engines/depthwise_conv.h"
#include "kernels/cpu/engines/depthwise_pointwise.h"
#include "kernels/cpu/engines/pointwise_depthwise.h"
#include "kernels/cpu/engines/gemm_slices.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/conv_fusion.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "kernels/cpu/engines/stem_conv.h"
#include "kernels/cpu/plan/prepack.h"
#include "kernels/cpu/engines/winograd_conv.h"

namespace mt::cpu {
namespace {

struct Conv2d {
  uint32_t kh, kw, stride_h, stride_w, dilation_h, dilation_w;
  uint32_t pad_top, pad_left, pad_bottom, pad_right;
  uint32_t groups;
  float low, high;
};

Conv2d conv_attrs(const Node& node, const Shape& weights) {
  const auto& strides = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  const auto& dilations = attr_ints(node, "dilations");
  return Conv2d{static_cast<uint32_t>(weights[2]), static_cast<uint32_t>(weights[3]),
                static_cast<uint32_t>(strides[0]), static_cast<uint32_t>(strides[1]),
                static_cast<uint32_t>(dilations[0]), static_cast<uint32_t>(dilations[1]),
                static_cast<uint32_t>(pads[0]), static_cast<uint32_t>(pads[1]),
                static_cast<uint32_t>(pads[2]), static_cast<uint32_t>(pads[3]),
                static_cast<uint32_t>(attr_int(node, "group")), attr_f32(node, "act_min"), attr_f32(node, "act_max")};
}

std::optional<std::string> check_conv_common(const Graph& graph, const Node& node, bool constant_weights) {
  if (auto reason = check_float(graph, node)) return reason;
  if (constant_weights) {
    if (auto reason = check_constant(graph, node, 1, "weights")) return reason;
    if (auto reason = check_constant(graph, node, 2, "bias")) return reason;
  }
  if (graph.tensor(node.inputs[0]).shape.size() != 4) return std::string("only 4-D input supported");
  if (attr_ints(node, "strides").size() != 2 || attr_ints(node, "dilations").size() != 2 ||
      attr_ints(node, "pads").size() != 4)
    return std::string("strides, dilations and pads must have 2, 2 and 4 values");
  for (const char* name : {"strides", "dilations"})
    for (int64_t v : attr_ints(node, name))
      if (v < 1) return fmt::format("{} {} not supported", name, v);
  for (int64_t v : attr_ints(node, "pads"))
    if (v < 0) return fmt::format("negative pad {} not supported", v);
  const float low = attr_f32(node, "act_min"), high = attr_f32(node, "act_max");
  if (!(low < high)) return fmt::format("act_min {} >= act_max {} not supported", low, high);
  return std::nullopt;
}

// 1x1, stride 1, no pads (one group is checked by the caller).
bool is_pointwise(const Conv2d& a) {
  return a.kh == 1 && a.kw == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_top == 0 && a.pad_left == 0 &&
         a.pad_bottom == 0 && a.pad_right == 0;
}

// The kernels a float32 conv2d runs on; conv2d_kernel picks one for planning and for mt-prepack.
enum class Conv2dKernel { runtime_weights, winograd4, winograd2, depthwise, gemm_pointwise, stem, gemm_indirect, xnnpack };

Conv2dKernel conv2d_kernel(const Graph& graph, const Node& node, const KernelPaths& paths) {
  const bool bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  const TensorInfo& w = graph.tensor(node.inputs[1]);
  if (!w.is_constant() || (bias && !graph.tensor(node.inputs[2]).is_constant())) return Conv2dKernel::runtime_weights;
  const Shape& xs = graph.tensor(node.inputs[0]).shape;  // N, C, H, W
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  if (paths.winograd && winograd_applies(graph, node)) {
    const size_t tile = winograd_tile({static_cast<size_t>(ys[2]), static_cast<size_t>(ys[3]),
                                       static_cast<size_t>(xs[1]), static_cast<size_t>(w.shape[0])});
    if (tile == 4) return Conv2dKernel::winograd4;
    if (tile == 2) return Conv2dKernel::winograd2;
  }
  const Conv2d a = conv_attrs(node, w.shape);
  const bool depthwise = a.groups > 1 && w.shape[1] == 1 && w.shape[0] == xs[1] && a.groups == w.shape[0];
  if (depthwise && paths.depthwise && depthwise_fits(a.kh, a.kw, a.stride_w, a.dilation_w))
    return Conv2dKernel::depthwise;
  // The packed GEMM pads the output channels to 32-column panels: from 16 channels on, that at
  // most doubles the packed weights (fewer stay with XNNPACK, which pads to 16).
  const bool packed = paths.packed_gemm && a.groups == 1 && w.shape[0] >= 16;
  if (packed && is_pointwise(a)) return Conv2dKernel::gemm_pointwise;
  const auto in_channels = static_cast<size_t>(w.shape[1]), out_channels = static_cast<size_t>(w.shape[0]);
  if (paths.stem_conv && a.groups == 1 && stem_conv_fits(in_channels, out_channels, a.kh, a.kw))
    return Conv2dKernel::stem;
  if (packed && packed_conv_fits(a.kh, a.kw, static_cast<size_t>(w.shape[1]))) return Conv2dKernel::gemm_indirect;
  return Conv2dKernel::xnnpack;
}

// The step's pointers: x, y, then the fused add's residual if there is one.
std::vector<Value> step_values(const Value& x, const FusedValues& out) {
  std::vector<Value> values{x, out.y};
  if (out.residual) values.push_back(*out.residual);
  return values;
}

// The epilogue with this run's residual pointer (the step's third, when fused).
Epilogue with_residual(Epilogue e, Pointers p) {
  if (p.size() > 2) e.residual = static_cast<const float*>(p[2]);
  return e;
}

// A pointwise conv whose input is a deferred ChannelGate: each run scales the packed weights' rows
// by the gate into scratch, then runs the GEMM on the ungated input.
void plan_gated_pointwise(NodeContext& c, const Conv2d& a, const ChannelGate& gate, const PackedWeights& w) {
  const Value x = c.tensor(gate.x, nhwc_layout());
  // [1, C, 1, 1] or [C, 1, 1]: C contiguous floats in any layout.
  const Value scale = c.tensor(gate.scale, identity_layout(c.graph().tensor(gate.scale).shape.size()));
  const Value scaled = c.scratch(packed_gemm_bytes(w.k, w.n));
  const ConvFusion fusion = conv_fusion(c);
  const FusedValues out = fused_values(c, fusion);
  const size_t pixels = count_of(x) / w.k;
  const Epilogue e = epilogue_of(a.low, a.high, fusion);
  std::vector<Value> values{x, out.y, scale, scaled};
  if (out.residual) values.push_back(*out.residual);
  c.add_kernel(values, [w, pixels, e](Pointers p, ThreadPool* pool) {
    const PackedWeights gated = scale_gemm_rows(w, static_cast<const float*>(p[2]), p[3]);
    Epilogue run = e;
    if (p.size() > 4) run.residual = static_cast<const float*>(p[4]);
    packed_gemm(gated, pixels, static_cast<const float*>(p[0]), w.k, static_cast<float*>(p[1]), w.n, run, pool);
  });
}

PackedConvShape conv_shape(const NodeContext& c, const Conv2d& a);

// The output of `conv`, a later conv that the step of `c` computes too (its fused nodes:
// `fusion`), or that of the last node it fuses, marking them planned. Planned from the step's
// context, so that a reordering of the residual is charged to the step's node.
FusedValues fused_conv_values(NodeContext& c, size_t conv, const ConvFusion& fusion) {
  if (!fusion.activation_node && !fusion.add_node) return FusedValues{.y = c.fused_output(conv, 0, nhwc_layout())};
  c.fuse_through(conv);
  return fused_values(c, fusion);
}

// The conv on `kernel` that alone reads the output of the conv of `c` (after its fused activation),
// as its input, if conv fusion is on and no add is fused into the conv of `c`: the second conv of a
// pair that can run as one step.
std::optional<size_t> fusable_conv_after(const NodeContext& c, const ConvFusion& fusion, Conv2dKernel kernel) {
  if (!c.conv_fusion() || fusion.add_node) return std::nullopt;
  const Graph& graph = c.graph();
  const std::string& mid =
      fusion.activation_node ? graph.nodes[*fusion.activation_node].outputs[0] : c.node().outputs[0];
  const std::optional<size_t> consumer = c.sole_consumer_of(mid);
  if (!consumer) return std::nullopt;
  const Node& node = graph.nodes[*consumer];
  if (node.op != "conv2d" || node.inputs[0] != mid || check_conv_common(graph, node, true) ||
      conv2d_kernel(graph, node, c.paths()) != kernel)
    return std::nullopt;
  return consumer;
}

// The pointwise conv on the packed GEMM that alone reads this depthwise conv's output (after its
// fused activation), if the two can run as one step (depthwise_pointwise.h).
std::optional<size_t> fusable_pointwise(const NodeContext& c, const ConvFusion& fusion) {
  return fusable_conv_after(c, fusion, Conv2dKernel::gemm_pointwise);
}

// The depthwise conv on depthwise_conv.h that alone reads this pointwise conv's output (after its
// fused activation), if the two pay as one step (pointwise_depthwise.h), with no add fused into it.
std::optional<size_t> fusable_depthwise(NodeContext& c, const ConvFusion& fusion) {
  const std::optional<size_t> consumer = fusable_conv_after(c, fusion, Conv2dKernel::depthwise);
  if (!consumer) return std::nullopt;
  const NodeContext dc = c.context_of(*consumer);
  if (conv_fusion(dc).add_node) return std::nullopt;
  const PackedConvShape shape = conv_shape(dc, conv_attrs(dc.node(), dc.input_info(1).shape));
  if (!pointwise_depthwise_pays(shape, static_cast<size_t>(std::max(1, c.threads())))) return std::nullopt;
  return consumer;
}

// The pointwise conv being planned (weights w, output stage e, fused nodes `fusion`), the depthwise
// conv `depthwise` and the activation it fuses, and the pointwise conv that alone reads that (the
// block's projection, with the nodes it fuses: fusable_pointwise) as one pointwise_depthwise step.
void plan_pointwise_depthwise(NodeContext& c, const PackedWeights& w, const Epilogue& e, const ConvFusion& fusion,
                              const Value& x, size_t depthwise) {
  NodeContext dc = c.context_of(depthwise);
  const Conv2d da = conv_attrs(dc.node(), dc.input_info(1).shape);
  const PackedConvShape shape = conv_shape(dc, da);
  const ConvFusion dw_fusion = conv_fusion(dc);
  PointwiseDepthwise fused{.pointwise = w,
                           .pointwise_epilogue = e,
                           .depthwise = {.data = static_cast<const float*>(packed_weights(dc, 1, CpuLayout::depthwise)),
                                         .channels = shape.channels,
                                         .kernel_h = da.kh,
                                         .kernel_w = da.kw},
                           .depthwise_epilogue = epilogue_of(da.low, da.high, dw_fusion)};
  // The pointwise output (the depthwise conv's input) is never stored: each thread keeps the rows
  // it needs in a ring in scratch. Nor, with a projection, the depthwise output.
  if (fusion.activation_node) c.fuse_through(*fusion.activation_node);
  const std::optional<size_t> project = fusable_pointwise(dc, dw_fusion);
  // The step's last conv (the projection, or the depthwise conv) and what it fuses.
  const size_t last = project ? *project : depthwise;
  NodeContext lc = c.context_of(last);
  const ConvFusion last_fusion = project ? conv_fusion(lc) : dw_fusion;
  if (project) {
    if (dw_fusion.activation_node) c.fuse_through(*dw_fusion.activation_node);
    c.fuse_through(depthwise);
    const Conv2d pa = conv_attrs(lc.node(), lc.input_info(1).shape);
    fused.project = packed_gemm_view(packed_weights(lc, 1, CpuLayout::gemm), shape.channels,
                                     static_cast<size_t>(lc.input_info(1).shape[0]));
    fused.project_epilogue = epilogue_of(pa.low, pa.high, last_fusion);
  }
  const FusedValues out = fused_conv_values(c, last, last_fusion);
  const size_t threads = static_cast<size_t>(std::max(1, c.threads()));
  const Value scratch = c.scratch(pointwise_depthwise_scratch_bytes(shape, threads, project.has_value()));
  // Pointers: x, scratch, y, [the projection's residual].
  std::vector<Value> values{x, scratch, out.y};
  if (out.residual) values.push_back(*out.residual);
  c.add_kernel(values, [fused, shape, threads](Pointers p, ThreadPool* pool) {
    pointwise_depthwise(fused, shape, static_cast<const float*>(p[0]), p[1], threads, static_cast<float*>(p[2]),
                        p.size() > 3 ? static_cast<const float*>(p[3]) : nullptr, pool);
  });
}

// A 1x1 stride-1 conv is one GEMM over the NHWC pixels, [pixels x C] x [C x M], run by our
// packed GEMM (packed_gemm.h).
void plan_pointwise(NodeContext& c, const Conv2d& a) {
  const Shape& ws = c.input_info(1).shape;
  const auto out_channels = static_cast<size_t>(ws[0]), in_channels = static_cast<size_t>(ws[1]);
  const PackedWeights w = packed_gemm_view(packed_weights(c, 1, CpuLayout::gemm), in_channels, out_channels);
  if (const ChannelGate* gate = c.channel_gate(0)) return plan_gated_pointwise(c, a, *gate, w);
  const Value x = c.input(0, nhwc_layout());
  const ConvFusion fusion = conv_fusion(c);
  if (const std::optional<size_t> depthwise = fusable_depthwise(c, fusion))
    return plan_pointwise_depthwise(c, w, epilogue_of(a.low, a.high, fusion), fusion, x, *depthwise);
  const FusedValues out = fused_values(c, fusion);
  const size_t pixels = count_of(x) / in_channels;
  const Epilogue e = epilogue_of(a.low, a.high, fusion);
  c.add_kernel(step_values(x, out), [w, pixels, in_channels, out_channels, e](Pointers p, ThreadPool* pool) {
    packed_gemm(w, pixels, static_cast<const float*>(p[0]), in_channels, static_cast<float*>(p[1]), out_channels,
                with_residual(e, p), pool);
  });
}

PackedConvShape conv_shape(const NodeContext& c, const Conv2d& a) {
  const Shape& xs = c.input_info(0).shape;  // N, C, H, W
  const Shape& ys = c.output_info(0).shape;
  return PackedConvShape{.n = static_cast<size_t>(xs[0]),
                         .h = static_cast<size_t>(xs[2]),
                         .w = static_cast<size_t>(xs[3]),
                         .channels = static_cast<size_t>(xs[1]),
                         .out_h = static_cast<size_t>(ys[2]),
                         .out_w = static_cast<size_t>(ys[3]),
                         .kernel_h = a.kh,
                         .kernel_w = a.kw,
                         .stride_h = a.stride_h,
                         .stride_w = a.stride_w,
                         .dilation_h = a.dilation_h,
                         .dilation_w = a.dilation_w,
                         .pad_top = a.pad_top,
                         .pad_left = a.pad_left};
}

// Other one-group convs run as indirect GEMMs over the input pixels (packed_gemm.h).
void plan_indirect(NodeContext& c, const Conv2d& a) {
  const PackedConvShape shape = conv_shape(c, a);
  const size_t out_channels = static_cast<size_t>(c.output_info(0).shape[1]), channels = shape.channels;
  const size_t k = size_t{a.kh} * a.kw * channels;
  const PackedWeights w = packed_gemm_view(packed_weights(c, 1, CpuLayout::gemm), k, out_channels);
  const auto* zeros = static_cast<const float*>(c.keep(channels * sizeof(float)));  // the padding's pixel
  const Value x = c.input(0, nhwc_layout());
  const ConvFusion fusion = conv_fusion(c);
  const FusedValues out = fused_values(c, fusion);
  const Epilogue e = epilogue_of(a.low, a.high, fusion);
  c.add_kernel(step_values(x, out), [w, shape, zeros, e](Pointers p, ThreadPool* pool) {
    packed_conv(w, shape, static_cast<const float*>(p[0]), zeros, static_cast<float*>(p[1]), with_residual(e, p), pool);
  });
}

// The depthwise conv being planned (its fusion: `fusion`), the pointwise conv `pointwise` with the
// nodes it fuses in turn, and ShuffleNet's channel shuffle of its output where that follows, as one
// depthwise_pointwise step.
void plan_depthwise_pointwise(NodeContext& c, const PackedDepthwise& w, const PackedConvShape& shape, const Value& x,
                              const Epilogue& e, const ConvFusion& fusion, size_t pointwise) {
  NodeContext pc = c.context_of(pointwise);
  const Shape& ws = pc.input_info(1).shape;
  const auto out_channels = static_cast<size_t>(ws[0]);
  const Conv2d pa = conv_attrs(pc.node(), ws);
  const ConvFusion pw_fusion = conv_fusion(pc);
  DepthwisePointwise fused{
      .depthwise = w,
      .depthwise_epilogue = e,
      .pointwise = packed_gemm_view(packed_weights(pc, 1, CpuLayout::gemm), shape.channels, out_channels),
      .pointwise_epilogue = epilogue_of(pa.low, pa.high, pw_fusion)};
  // The depthwise output (the pointwise conv's input) is never stored: each thread keeps its rows of
  // it in scratch.
  if (fusion.activation_node) c.fuse_through(*fusion.activation_node);
  const size_t threads = static_cast<size_t>(std::max(1, c.threads()));
  const Value scratch = c.scratch(depthwise_pointwise_scratch_bytes(shape, threads));
  const FusedValues out = fused_conv_values(c, pointwise, pw_fusion);
  // Pointers: x, scratch, y, [residual], [the shuffle's inputs and outputs].
  std::vector<Value> values{x, scratch, out.y};
  if (out.residual) values.push_back(*out.residual);
  const Graph& graph = c.graph();
  const std::string& last = pw_fusion.add_node          ? graph.nodes[*pw_fusion.add_node].outputs[0]
                            : pw_fusion.activation_node ? graph.nodes[*pw_fusion.activation_node].outputs[0]
                                                        : pc.node().outputs[0];
  const FusedShuffle shuffle = fuse_shuffle_after(c, last, values);
  const bool has_residual = out.residual.has_value();
  c.add_kernel(values, [fused, shape, threads, has_residual, shuffle](Pointers p, ThreadPool* pool) {
    const ShuffleTail tail = shuffle.at(p);
    depthwise_pointwise(fused, shape, static_cast<const float*>(p[0]), p[1], threads, static_cast<float*>(p[2]),
                        has_residual ? static_cast<const float*>(p[3]) : nullptr, shuffle_tail(tail), pool);
  });
}

// A depthwise conv (one input and one output channel per group) on depthwise_conv.h.
void plan_depthwise(NodeContext& c, const Conv2d& a) {
  const PackedConvShape shape = conv_shape(c, a);
  const PackedDepthwise w{.data = static_cast<const float*>(packed_weights(c, 1, CpuLayout::depthwise)),
                          .channels = shape.channels, .kernel_h = a.kh, .kernel_w = a.kw};
  const Value x = c.input(0, nhwc_layout());
  const ConvFusion fusion = conv_fusion(c);
  if (const std::optional<size_t> pointwise = fusable_pointwise(c, fusion))
    return plan_depthwise_pointwise(c, w, shape, x, epilogue_of(a.low, a.high, fusion), fusion, *pointwise);
  const FusedValues out = fused_values(c, fusion);
  const Epilogue e = epilogue_of(a.low, a.high, fusion);
  c.add_kernel(step_values(x, out), [w, shape, e](Pointers p, ThreadPool* pool) {
    depthwise_conv(w, shape, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), with_residual(e, p), pool);
  });
}

// Where element (n, c, y, x) of `value` is, in floats: its layout's strides of the logical dims.
StemStrides strides_of(const Value& value) {
  const Shape physical = value.physical();
  std::vector<size_t> stride(physical.size(), 1);
  for (size_t k = physical.size(); k-- > 1;) stride[k - 1] = stride[k] * static_cast<size_t>(physical[k]);
  const auto of = [&](int axis) { return stride[static_cast<size_t>(physical_axis(value.layout, axis))]; };
  return StemStrides{.image = of(0), .channel = of(1), .row = of(2), .column = of(3)};
}

// A one-group conv of 1 to 4 input channels (a stem) on stem_conv.h, reading the input in the
// layout it has (a caller's NCHW image needs no reordering).
void plan_stem(NodeContext& c, const Conv2d& a) {
  const PackedConvShape shape = conv_shape(c, a);
  const size_t out_channels = static_cast<size_t>(c.output_info(0).shape[1]);
  const PackedStem w{.data = static_cast<const float*>(packed_weights(c, 1, CpuLayout::stem)),
                     .in_channels = shape.channels, .out_channels = out_channels, .kernel_h = a.kh, .kernel_w = a.kw};
  const Value x = c.input(0);
  const StemStrides strides = strides_of(x);
  const ConvFusion fusion = conv_fusion(c);
  const FusedValues out = fused_values(c, fusion);
  const Epilogue e = epilogue_of(a.low, a.high, fusion);
  c.add_kernel(step_values(x, out), [w, shape, strides, e](Pointers p, ThreadPool* pool) {
    stem_conv(w, shape, static_cast<const float*>(p[0]), strides, static_cast<float*>(p[1]), with_residual(e, p), pool);
  });
}

}  // namespace

bool folds_channel_gate(const NodeContext& c, size_t conv) {
  const Node& node = c.graph().nodes.at(conv);
  if (!c.conv_fusion() || node.op != "conv2d" ||
      conv2d_kernel(c.graph(), node, c.paths()) != Conv2dKernel::gemm_pointwise)
    return false;
  const Shape& xs = c.graph().tensor(node.inputs[0]).shape;  // N, C, H, W
  const auto pixels = static_cast<size_t>(xs[0] * xs[2] * xs[3]);
  const auto out_channels = static_cast<size_t>(c.graph().tensor(node.inputs[1]).shape[0]);
  return pixels >= 2 * ((out_channels + 31) / 32 * 32);
}

std::optional<CpuLayout> conv2d_weight_layout(const Graph& graph, const Node& node, size_t input,
                                              const KernelPaths& paths) {
  if (input != 1) return std::nullopt;
  switch (conv2d_kernel(graph, node, paths)) {
    case Conv2dKernel::winograd4: return paths.packed_gemm ? CpuLayout::winograd4_gemm : CpuLayout::winograd4;
    case Conv2dKernel::winograd2: return paths.packed_gemm ? CpuLayout::winograd2_gemm : CpuLayout::winograd2;
    case Conv2dKernel::gemm_pointwise:
    case Conv2dKernel::gemm_indirect: return CpuLayout::gemm;
    case Conv2dKernel::depthwise: return CpuLayout::depthwise;
    case Conv2dKernel::stem: return CpuLayout::stem;
    case Conv2dKernel::runtime_weights:
    case Conv2dKernel::xnnpack: break;
  }
  return std::nullopt;
}

void pack_conv2d_weights(const Graph& graph, const Node& node, CpuLayout layout, void* memory) {
  const TensorInfo& w = graph.tensor(node.inputs[1]);
  const auto m = static_cast<size_t>(w.shape[0]), c = static_cast<size_t>(w.shape[1]);
  const auto kh = static_cast<size_t>(w.shape[2]), kw = static_cast<size_t>(w.shape[3]);
  const bool has_bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  const float* bias = has_bias ? graph.tensor(node.inputs[2]).data.as<float>().data() : nullptr;
  if (layout == CpuLayout::depthwise) {  // OIHW with one input channel per group: also OHWI's bytes
    pack_depthwise_weights(memory, w.data.as<float>().data(), bias, kh, kw, m);
    return;
  }
  if (layout == CpuLayout::stem) {
    const ConstData ohwi = ohwi_weights(w);
    pack_stem_weights(memory, ohwi.as<float>().data(), bias, c, m, kh, kw);
    return;
  }
  if (layout == CpuLayout::gemm) {
    const size_t k = c * kh * kw;
    const ConstData ohwi = ohwi_weights(w);  // a 1x1 kernel's OIHW weights are OHWI already
    pack_gemm_weights(memory, ohwi.as<float>().data(), k, bias, k, m);
    return;
  }
  const bool f4 = layout == CpuLayout::winograd4 || layout == CpuLayout::winograd4_gemm;
  const size_t tile = f4 ? 4 : 2;
  const float* weights = w.data.as<float>().data();
  if (layout == CpuLayout::winograd4 || layout == CpuLayout::winograd2) {
    for (size_t k = 0; k < winograd_points(tile); ++k)
      winograd_weights(static_cast<float*>(memory) + k * m * c, weights, w.layout == kLayoutOhwi, tile, k, c, m);
    return;
  }
  // The GEMM form: each point's U packed, from the stored points or transformed one at a time.
  const bool points = parse_cpu_layout(w.layout) == (f4 ? CpuLayout::winograd4 : CpuLayout::winograd2);
  std::vector<float> u(points ? 0 : m * c);
  for (size_t k = 0; k < winograd_points(tile); ++k) {
    const float* point = weights + k * m * c;
    if (!points) {
      winograd_weights(u.data(), weights, w.layout == kLayoutOhwi, tile, k, c, m);
      point = u.data();
    }
    pack_gemm_weights(static_cast<std::byte*>(memory) + k * packed_gemm_bytes(c, m), point, c, nullptr, c, m);
  }
}

// Weights computed at run time go through conv_gemm.cpp.
std::optional<std::string> check_conv2d(const Graph& graph, const Node& node) {
  return check_conv_common(graph, node, false);
}

void plan_conv2d(NodeContext& c) {
  const Shape x_shape = c.input_info(0).shape;  // N, C, H, W
  const Shape w_shape = c.input_info(1).shape;  // M, C/g, kH, kW
  const Shape& y_shape = c.output_info(0).shape;
  const Conv2d a = conv_attrs(c.node(), w_shape);
  switch (conv2d_kernel(c.graph(), c.node(), c.paths())) {
    case Conv2dKernel::runtime_weights: return plan_conv2d_runtime_weights(c);
    case Conv2dKernel::winograd4: return plan_conv2d_winograd(c, 4);
    case Conv2dKernel::winograd2: return plan_conv2d_winograd(c, 2);
    case Conv2dKernel::depthwise: return plan_depthwise(c, a);
    case Conv2dKernel::gemm_pointwise: return plan_pointwise(c, a);
    case Conv2dKernel::stem: return plan_stem(c, a);
    case Conv2dKernel::gemm_indirect: return plan_indirect(c, a);
    case Conv2dKernel::xnnpack: break;
  }
  const size_t out_channels = static_cast<size_t>(w_shape[0]);
  const size_t group_in = static_cast<size_t>(w_shape[1]);
  const size_t group_out = out_channels / a.groups;
  const size_t kernel = static_cast<size_t>(a.kh) * a.kw;

  // XNNPACK reads OHWI as [groups][group_out][kH][kW][group_in]: a copy freed once it has packed it,
  // or, in a prepacked model (mt-prepack), the weights as stored.
  const ConstData ohwi = ohwi_weights(c.input_info(1));
  const float* w = ohwi.as<float>().data();
  const float* bias = c.has_input(2) ? c.constant(2).as<float>().data() : nullptr;

  const Value x = c.xnn_input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  const size_t batch = static_cast<size_t>(x_shape[0]), height = static_cast<size_t>(x_shape[2]),
               width = static_cast<size_t>(x_shape[3]);
  const size_t pixels = batch * static_cast<size_t>(y_shape[2]) * static_cast<size_t>(y_shape[3]);
  const size_t slice = a.groups == 1 ? output_slice(out_channels, kernel * group_in, pixels) : out_channels;
  for (size_t o0 = 0; o0 < out_channels; o0 += slice) {
    const size_t count = std::min(slice, out_channels - o0);
    xnn_operator_t op =
        c.create_xnn("xnn_create_convolution2d_nhwc_f32", xnn_create_convolution2d_nhwc_f32, a.pad_top, a.pad_right,
                     a.pad_bottom, a.pad_left, a.kh, a.kw, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w, a.groups,
                     group_in, a.groups == 1 ? count : group_out, group_in * a.groups, out_channels,
                     w + o0 * kernel * group_in, bias != nullptr ? bias + o0 : nullptr, a.low, a.high, 0);
    Value y_slice = y;
    y_slice.offset += o0 * sizeof(float);
    c.add_xnn(op, {x, y_slice}, [batch, height, width](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
      return xnn_setup_convolution2d_nhwc_f32(o, batch, height, width, static_cast<const float*>(p[0]),
                                              static_cast<float*>(p[1]), pool);
    });
  }
  c.count_packed((out_channels * kernel * group_in + out_channels) * sizeof(float));
}

// Weights computed at run time go through conv_transpose_direct.cpp.
std::optional<std::string> check_conv_transpose2d(const Graph& graph, const Node& node) {
  if (auto reason = check_conv_common(graph, node, false)) return reason;
  const auto& strides = attr_ints(node, "strides");
  const auto& output_padding = attr_ints(node, "output_padding");
  if (output_padding.size() != 2) return std::string("output_padding must have 2 values");
  for (size_t d = 0; d < 2; ++d)
    if (output_padding[d] < 0 || output_padding[d] >= strides[d])
      return fmt::format("output_padding {} with stride {} not supported", output_padding[d], strides[d]);
  return std::nullopt;
}

void plan_conv_transpose2d(NodeContext& c) {
  if (!c.is_constant(1) || (c.has_input(2) && !c.is_constant(2))) {
    plan_conv_transpose2d_runtime_weights(c);
    return;
  }
  const Shape x_shape = c.input_info(0).shape;  // N, C, H, W
  const Shape w_shape = c.input_info(1).shape;  // C, M/g, kH, kW
  const Conv2d a = conv_attrs(c.node(), w_shape);
  const size_t in_channels = static_cast<size_t>(w_shape[0]);
  const size_t group_out = static_cast<size_t>(w_shape[1]);
  const size_t group_in = in_channels / a.groups;
  const size_t out_channels = group_out * a.groups;
  const size_t kernel = static_cast<size_t>(a.kh) * a.kw;

  // [g][group_in][group_out][kH][kW] -> [g][group_out][kH][kW][group_in], unless prepacked (group 1).
  const float* w = c.constant(1).as<float>().data();
  std::vector<float> packed;
  if (c.input_info(1).layout != kLayoutOhwi) {
    packed.resize(in_channels * group_out * kernel);
    for (size_t g = 0; g < a.groups; ++g)
      for (size_t i = 0; i < group_in; ++i)
        for (size_t o = 0; o < group_out; ++o)
          for (size_t s = 0; s < kernel; ++s)
            packed[((g * group_out + o) * kernel + s) * group_in + i] =
                w[(((g * group_in + i) * group_out) + o) * kernel + s];
    w = packed.data();
  }
  const float* bias = c.has_input(2) ? c.constant(2).as<float>().data() : nullptr;
  const auto& output_padding = attr_ints(c.node(), "output_padding");
  const auto adjust_h = static_cast<uint32_t>(output_padding[0]), adjust_w = static_cast<uint32_t>(output_padding[1]);

  xnn_operator_t op =
      c.create_xnn("xnn_create_deconvolution2d_nhwc_f32", xnn_create_deconvolution2d_nhwc_f32, a.pad_top, a.pad_right,
                   a.pad_bottom, a.pad_left, a.kh, a.kw, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w, a.groups,
                   group_in, group_out, in_channels, out_channels, w, bias, a.low, a.high, 0);
  c.count_packed((in_channels * group_out * kernel + out_channels) * sizeof(float));
  const Value x = c.xnn_input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  const size_t batch = static_cast<size_t>(x_shape[0]), height = static_cast<size_t>(x_shape[2]),
               width = static_cast<size_t>(x_shape[3]);
  c.add_xnn(op, {x, y}, [=](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return xnn_setup_deconvolution2d_nhwc_f32(o, batch, height, width, adjust_h, adjust_w,
                                              static_cast<const float*>(p[0]), static_cast<float*>(p[1]), pool);
  });
}

}  // namespace mt::cpu
