// Planning int8 conv2d and linear onto the AVX512-VNNI kernels of int8_vnni.h: weights packed once
// (bias folded with the input zero point, one float multiplier x_scale * w_scale / y_scale per
// output channel, formed as the reference forms it) by pack_int8_weights, here or by mt-prepack,
// whose stored form is then read in place (packed_forms.h); the fused clamp from the node's act_min /
// act_max. The GEMMs read their input flipped to unsigned (int8_flip) from a scratch buffer of the
// arena, which may be over-read.
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
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "kernels/cpu/plan/prepack.h"
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

// Input 0 in `layout` and a scratch buffer for its flipped bytes.
std::pair<Value, Value> gemm_input(NodeContext& c, const Layout& layout) {
  const Value x = c.input(0, layout);
  return {x, c.scratch(count_of(x))};
}

size_t to_size(int64_t v) { return static_cast<size_t>(v); }

// A step's fused add: its fourth pointer is the residual; steps without one have three.
Int8Residual residual_of(const Int8ResidualAdd& add, Pointers p) {
  return p.size() > 3 ? Int8Residual{&add, static_cast<const int8_t*>(p[3])} : Int8Residual{};
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

bool plan_conv2d_int8_vnni(NodeContext& c) {
  const Int8ConvKernel kernel = int8_conv2d_kernel(c.graph(), c.node(), c.paths());
  if (kernel == Int8ConvKernel::xnnpack) return false;
  const Node& node = c.node();
  const Shape xs = c.input_info(0).shape, ws = c.input_info(1).shape, ys = c.output_info(0).shape;
  const auto& strides = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  const auto& dilations = attr_ints(node, "dilations");
  const size_t channels = to_size(xs[1]), out_channels = to_size(ws[0]);
  const size_t kh = to_size(ws[2]), kw = to_size(ws[3]);

  const PackedConvShape shape{.n = to_size(xs[0]), .h = to_size(xs[2]), .w = to_size(xs[3]), .channels = channels,
                              .out_h = to_size(ys[2]), .out_w = to_size(ys[3]), .kernel_h = kh, .kernel_w = kw,
                              .stride_h = to_size(strides[0]), .stride_w = to_size(strides[1]),
                              .dilation_h = to_size(dilations[0]), .dilation_w = to_size(dilations[1]),
                              .pad_top = pads[0], .pad_left = pads[1]};
  if (kernel == Int8ConvKernel::depthwise) {
    const PackedInt8Depthwise w =
        int8_depthwise_view(packed_weights(c, 1, CpuLayout::vnni_depthwise), kh, channels, output_of(c));
    const int8_t* padding = padding_pixel(c, channels, false);
    const size_t threads = static_cast<size_t>(std::max(1, c.threads()));
    const Value x = c.input(0, nhwc_layout());
    const Value y = c.output(0, nhwc_layout());
    const Value scratch = c.scratch(int8_depthwise_scratch_bytes(shape, threads));  // arena: 64-byte aligned
    c.add_kernel({x, y, scratch}, [w, shape, padding, threads](Pointers p, pthreadpool_t pool) {
      int8_depthwise(w, shape, static_cast<const int8_t*>(p[0]), padding, static_cast<int8_t*>(p[1]), p[2], threads,
                     pool);
    });
    return true;
  }
  // Gathered convs pack the OHWI rows as one run of taps x channels.
  const bool gathered = kernel == Int8ConvKernel::gemm_gathered;
  const size_t taps = gathered ? 1 : kh * kw, run = gathered ? kh * kw * channels : channels;
  const PackedInt8Gemm w =
      int8_gemm_view(packed_weights(c, 1, gathered ? CpuLayout::vnni_gemm_gathered : CpuLayout::vnni_gemm), taps, run,
                     out_channels, output_of(c));
  const auto [x, flipped] = gemm_input(c, nhwc_layout());
  const std::optional<FusedAdd> fused = fusable_add(c);
  std::vector<Value> values{x, Value{}, flipped};  // + the residual when fused
  if (fused) {
    values.push_back(c.tensor(fused->residual, nhwc_layout()));
    values[1] = c.fused_output(fused->node, 0, nhwc_layout());
  } else {
    values[1] = c.output(0, nhwc_layout());
  }
  const Int8ResidualAdd add = fused ? fused->add : Int8ResidualAdd{};
  const size_t bytes = count_of(x);
  const bool pointwise = kh * kw == 1 && strides[0] == 1 && strides[1] == 1 &&
                         std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
  if (pointwise) {  // one GEMM over the pixels
    const size_t pixels = bytes / channels;
    c.add_kernel(values, [w, bytes, pixels, channels, out_channels, add](Pointers p, pthreadpool_t pool) {
      auto* u = static_cast<uint8_t*>(p[2]);
      int8_flip(static_cast<const int8_t*>(p[0]), u, bytes, pool);
      int8_gemm(w, pixels, u, channels, static_cast<int8_t*>(p[1]), out_channels, pool, residual_of(add, p));
    });
    return true;
  }
  const auto* padding = reinterpret_cast<const uint8_t*>(padding_pixel(c, (channels + 3) / 4 * 4, true));
  c.add_kernel(values, [w, shape, padding, bytes, add](Pointers p, pthreadpool_t pool) {
    auto* u = static_cast<uint8_t*>(p[2]);
    int8_flip(static_cast<const int8_t*>(p[0]), u, bytes, pool);
    int8_conv(w, shape, u, padding, static_cast<int8_t*>(p[1]), pool, residual_of(add, p));
  });
  return true;
}

// Every row of X (row-major) is one row of the GEMM.
void plan_linear_int8_vnni(NodeContext& c) {
  const Shape& ws = c.input_info(1).shape;  // N, K
  const size_t n = to_size(ws[0]), k = to_size(ws[1]);
  const PackedInt8Gemm w = int8_gemm_view(packed_weights(c, 1, CpuLayout::vnni_gemm), 1, k, n, output_of(c));
  const size_t rank = c.input_info(0).shape.size();
  const auto [x, flipped] = gemm_input(c, identity_layout(rank));
  const Value y = c.output(0, identity_layout(rank));
  const size_t bytes = count_of(x), rows = k == 0 ? 0 : bytes / k;
  c.add_kernel({x, y, flipped}, [w, bytes, rows, k, n](Pointers p, pthreadpool_t pool) {
    auto* u = static_cast<uint8_t*>(p[2]);
    int8_flip(static_cast<const int8_t*>(p[0]), u, bytes, pool);
    int8_gemm(w, rows, u, k, static_cast<int8_t*>(p[1]), n, pool);
  });
}

}  // namespace mt::cpu
