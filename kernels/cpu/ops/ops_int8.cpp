// int8 conv2d, linear, max_pool2d and global_avg_pool as XNNPACK NHWC operators, and avg_pool2d
// as a portable NHWC kernel (this XNNPACK's average pooling is qu8 only). Convolutions
// use the qc8 operator (per-output-channel weight scales): general, depthwise (XNNPACK picks its
// depthwise kernels when a group has one input channel) and pointwise alike. Requantization is
// XNNPACK's fp32 one (accumulator times a float multiplier, rounded half to even), the reference
// int8 kernels' arithmetic; results may still differ by one step where the product of two
// floats falls on a rounding boundary differently.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops_int8.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/int8_arithmetic.h"
#include "lib/ops/int8_limits.h"
#include "lib/runtime/prepack.h"

namespace mt::cpu {

std::pair<int8_t, int8_t> int8_output_bounds(const Node& node, Int8Params y) {
  const auto [lo, hi] = int8_clamp_bounds(attr_float(node, "act_min"), attr_float(node, "act_max"), y.scale, y.zero_point);
  return {static_cast<int8_t>(lo), static_cast<int8_t>(hi)};
}

namespace {

// Per-output-channel weight scales (a per-tensor scale repeated), or the reason they do not fit.
std::optional<std::string> check_weights(const Graph& graph, const Node& node) {
  if (auto reason = check_constant(graph, node, 1, "weights")) return reason;
  if (auto reason = check_constant(graph, node, 2, "bias")) return reason;
  const TensorInfo& w = graph.tensor(node.inputs[1]);
  if (w.dtype != DType::i8 || !w.quant) return fmt::format("weights '{}' must be int8 with parameters", w.name);
  const auto& q = *w.quant;
  const bool per_channel = q.axis == 0 && q.scales.size() == static_cast<size_t>(w.shape.at(0));
  const bool per_tensor = q.axis < 0 && q.scales.size() == 1;
  if (!per_channel && !per_tensor) return fmt::format("weights '{}' need per-channel (axis 0) or per-tensor scales", w.name);
  for (int32_t zero : q.zero_points)
    if (zero != 0) return fmt::format("weights '{}' must be symmetric (zero point 0)", w.name);
  if (node.inputs.size() > 2 && !node.inputs[2].empty() && graph.tensor(node.inputs[2]).dtype != DType::i32)
    return std::string("bias must be int32");
  if (auto reason = check_int8_activation(graph, node.inputs[0])) return reason;
  if (auto reason = check_int8_activation(graph, node.outputs[0])) return reason;
  const Int8Params x = int8_params(graph.tensor(node.inputs[0])), y = int8_params(graph.tensor(node.outputs[0]));
  for (float s : q.scales)
    if (!(s > 0.0f) || !int8_limits::kRequantization.contains(static_cast<double>(x.scale) * s / y.scale))
      return fmt::format("weight scale {} gives a requantization multiplier XNNPACK does not take", s);
  // XNNPACK refuses an output range of one value; the VNNI kernels would run it, but both paths must
  // accept the same models (a model planned here must plan on a CPU without VNNI too).
  if (const auto [lo, hi] = int8_output_bounds(node, y); lo >= hi)
    return fmt::format("act_min {} >= act_max {} leaves an empty int8 output range", attr_float(node, "act_min"),
                       attr_float(node, "act_max"));
  return std::nullopt;
}

struct ConvShape {
  uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0, pb = 0, pr = 0, groups = 1;
  size_t group_in = 0, group_out = 0;
};

// Creates the qc8 convolution over NHWC input (OHWI weights per group, as XNNPACK reads them).
xnn_operator_t create_qc8(NodeContext& c, const ConvShape& s, const int8_t* ohwi) {
  const Int8Params x = int8_params(c.input_info(0)), y = int8_params(c.output_info(0));
  const std::vector<float> scales = int8_weight_scales(c.input_info(1));
  const int32_t* bias = c.has_input(2) ? c.constant(2).as<int32_t>().data() : nullptr;
  const auto [lo, hi] = int8_output_bounds(c.node(), y);
  const size_t out_channels = s.group_out * s.groups;
  xnn_operator_t op = c.create_xnn("xnn_create_convolution2d_nhwc_qc8", xnn_create_convolution2d_nhwc_qc8, s.pt, s.pr,
                                   s.pb, s.pl, s.kh, s.kw, s.sh, s.sw, s.dh, s.dw, s.groups, s.group_in, s.group_out,
                                   s.group_in * s.groups, out_channels, static_cast<int8_t>(x.zero_point), x.scale,
                                   scales.data(), ohwi, bias, static_cast<int8_t>(y.zero_point), y.scale, lo, hi, 0);
  c.count_packed(out_channels * (s.kh * s.kw * s.group_in + 2 * sizeof(int32_t)));
  return op;
}

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

}  // namespace

std::optional<std::string> check_conv2d_int8(const Graph& graph, const Node& node) {
  if (graph.tensor(node.inputs[0]).shape.size() != 4) return std::string("only 4-D input supported");
  if (attr_ints(node, "strides").size() != 2 || attr_ints(node, "dilations").size() != 2 ||
      attr_ints(node, "pads").size() != 4)
    return std::string("strides, dilations and pads must have 2, 2 and 4 values");
  for (int64_t v : attr_ints(node, "pads"))
    if (v < 0) return fmt::format("negative pad {} not supported", v);
  return check_weights(graph, node);
}

void plan_conv2d_int8(NodeContext& c) {
  const Shape x_shape = c.input_info(0).shape;  // N, C, H, W
  const Shape w_shape = c.input_info(1).shape;  // M, C/g, kH, kW
  const auto& strides = attr_ints(c.node(), "strides");
  const auto& pads = attr_ints(c.node(), "pads");
  const auto& dilations = attr_ints(c.node(), "dilations");
  ConvShape s{u32(w_shape[2]), u32(w_shape[3]), u32(strides[0]), u32(strides[1]), u32(dilations[0]), u32(dilations[1]),
              u32(pads[0]), u32(pads[1]), u32(pads[2]), u32(pads[3]), u32(attr_int(c.node(), "group"))};
  const size_t out_channels = static_cast<size_t>(w_shape[0]);
  s.group_in = static_cast<size_t>(w_shape[1]);
  s.group_out = out_channels / s.groups;
  const size_t kernel = static_cast<size_t>(s.kh) * s.kw;
  if (plan_conv2d_int8_vnni(c)) return;
  // OIHW -> OHWI (freed once XNNPACK has packed it), unless mt-prepack stored it so.
  const int8_t* w = c.constant(1).as<int8_t>().data();
  std::vector<int8_t> ohwi;
  if (c.input_info(1).layout != kLayoutOhwi) {
    ohwi.resize(out_channels * kernel * s.group_in);
    for (size_t o = 0; o < out_channels; ++o)
      for (size_t i = 0; i < s.group_in; ++i)
        for (size_t k = 0; k < kernel; ++k)
          ohwi[(o * kernel + k) * s.group_in + i] = w[(o * s.group_in + i) * kernel + k];
    w = ohwi.data();
  }
  xnn_operator_t op = create_qc8(c, s, w);
  const Value x = c.xnn_input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  const size_t batch = static_cast<size_t>(x_shape[0]), height = static_cast<size_t>(x_shape[2]),
               width = static_cast<size_t>(x_shape[3]);
  c.add_xnn(op, {x, y}, [batch, height, width](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_qc8(o, batch, height, width, static_cast<const int8_t*>(p[0]),
                                            static_cast<int8_t*>(p[1]), pool);
  });
}

std::optional<std::string> check_linear_int8(const Graph& graph, const Node& node) {
  if (graph.tensor(node.inputs[0]).shape.empty()) return std::string("scalar input not supported");
  return check_weights(graph, node);
}

// Every row of X (row-major) is one 1x1 "image" of K channels: N = rows, H = W = 1.
void plan_linear_int8(NodeContext& c) {
  if (c.int8_vnni()) return plan_linear_int8_vnni(c);
  const Shape& w_shape = c.input_info(1).shape;  // N, K
  ConvShape s;
  s.group_in = static_cast<size_t>(w_shape[1]);
  s.group_out = static_cast<size_t>(w_shape[0]);
  xnn_operator_t op = create_qc8(c, s, c.constant(1).as<int8_t>().data());
  const size_t rank = c.input_info(0).shape.size();
  const Value x = c.xnn_input(0, identity_layout(rank));
  const Value y = c.output(0, identity_layout(rank));
  const size_t rows = s.group_in == 0 ? 0 : count_of(x) / s.group_in;
  c.add_xnn(op, {x, y}, [rows](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_qc8(o, rows, 1, 1, static_cast<const int8_t*>(p[0]), static_cast<int8_t*>(p[1]),
                                            pool);
  });
}

std::optional<std::string> check_max_pool2d_int8(const Graph& graph, const Node& node) {
  if (auto reason = check_int8_activation(graph, node.inputs[0])) return reason;
  if (auto reason = check_int8_activation(graph, node.outputs[0])) return reason;
  if (int8_params(graph.tensor(node.inputs[0])) != int8_params(graph.tensor(node.outputs[0])))
    return std::string("input and output quantization parameters differ");
  if (graph.tensor(node.inputs[0]).shape.size() != 4) return std::string("only 4-D input supported");
  const auto& kernel = attr_ints(node, "kernel_shape");
  if (kernel.size() != 2 || attr_ints(node, "strides").size() != 2 || attr_ints(node, "pads").size() != 4 ||
      attr_ints(node, "dilations").size() != 2)
    return std::string("only 2-D windows supported");
  if (kernel[0] * kernel[1] <= 1) return std::string("1x1 windows not supported");  // XNNPACK refuses them
  for (int64_t v : attr_ints(node, "pads"))
    if (v < 0) return fmt::format("negative pad {} not supported", v);
  return std::nullopt;
}

void plan_max_pool2d_int8(NodeContext& c) {
  if (c.int8_vnni()) return plan_max_pool2d_int8_vnni(c);
  const Node& node = c.node();
  const Shape& xs = c.input_info(0).shape;
  const Shape& ys = c.output_info(0).shape;
  const auto& k = attr_ints(node, "kernel_shape");
  const auto& st = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  const auto& dil = attr_ints(node, "dilations");
  // ceil_mode: extra bottom/right padding that makes XNNPACK's floor arithmetic give the node's size
  // (max pooling ignores padding).
  auto end_pad = [](int64_t out, int64_t stride, int64_t extent, int64_t in, int64_t begin, int64_t end) {
    return static_cast<uint32_t>(std::max(end, (out - 1) * stride + extent - in - begin));
  };
  const uint32_t pb = end_pad(ys[2], st[0], dil[0] * (k[0] - 1) + 1, xs[2], pads[0], pads[2]);
  const uint32_t pr = end_pad(ys[3], st[1], dil[1] * (k[1] - 1) + 1, xs[3], pads[1], pads[3]);
  const size_t channels = static_cast<size_t>(xs[1]);
  xnn_operator_t op = c.create_xnn("xnn_create_max_pooling2d_nhwc_s8", xnn_create_max_pooling2d_nhwc_s8, u32(pads[0]),
                                   pr, pb, u32(pads[1]), u32(k[0]), u32(k[1]), u32(st[0]), u32(st[1]), u32(dil[0]),
                                   u32(dil[1]), channels, channels, channels, -128, 127, 0);
  const Value x = c.xnn_input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  const size_t batch = static_cast<size_t>(xs[0]), height = static_cast<size_t>(xs[2]),
               width = static_cast<size_t>(xs[3]);
  c.add_xnn(op, {x, y}, [batch, height, width](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return xnn_setup_max_pooling2d_nhwc_s8(o, batch, height, width, static_cast<const int8_t*>(p[0]),
                                           static_cast<int8_t*>(p[1]), pool);
  });
}

std::optional<std::string> check_avg_pool2d_int8(const Graph& graph, const Node& node) {
  if (auto reason = check_int8_activation(graph, node.inputs[0])) return reason;
  if (auto reason = check_int8_activation(graph, node.outputs[0])) return reason;
  if (graph.tensor(node.inputs[0]).shape.size() != 4) return std::string("only 4-D input supported");
  if (attr_ints(node, "kernel_shape").size() != 2 || attr_ints(node, "strides").size() != 2 ||
      attr_ints(node, "pads").size() != 4)
    return std::string("only 2-D windows supported");
  for (int64_t v : attr_ints(node, "pads"))
    if (v < 0) return fmt::format("negative pad {} not supported", v);
  return std::nullopt;
}

// y = requantize(sum of (x - x_zero) over the taps on the input, x_scale / (count * y_scale)),
// count as the reference counts (taps on the input, or on the padded input with
// count_include_pad); one multiplier per output position, formed in float32 as the reference does.
void plan_avg_pool2d_int8(NodeContext& c) {
  const Shape xs = c.input_info(0).shape, ys = c.output_info(0).shape;
  const Int8Params x = int8_params(c.input_info(0)), y = int8_params(c.output_info(0));
  const Window2d window = pool_window(c.node());
  const bool include_pad = attr_int(c.node(), "count_include_pad") == 1;
  auto taps = [&](int axis, int64_t start, int64_t size) {
    const WindowTaps counts = window_taps(window, axis, start, size);
    return include_pad ? counts.padded : counts.valid;
  };
  const size_t out_h = static_cast<size_t>(ys[2]), out_w = static_cast<size_t>(ys[3]);
  std::vector<float> multipliers(out_h * out_w);
  for (size_t oh = 0; oh < out_h; ++oh)
    for (size_t ow = 0; ow < out_w; ++ow) {
      const int64_t count = taps(0, static_cast<int64_t>(oh) * window.stride[0] - window.pad_begin[0], xs[2]) *
                            taps(1, static_cast<int64_t>(ow) * window.stride[1] - window.pad_begin[1], xs[3]);
      multipliers[oh * out_w + ow] = x.scale / (static_cast<float>(count) * y.scale);
    }
  const size_t batch = static_cast<size_t>(xs[0]), channels = static_cast<size_t>(xs[1]);
  const int64_t height = xs[2], width = xs[3];
  const Value xv = c.input(0, nhwc_layout());
  const Value yv = c.output(0, nhwc_layout());
  c.add_kernel({xv, yv}, [=](Pointers p, ThreadPool* pool) {
    const auto* in = static_cast<const int8_t*>(p[0]);
    auto* out = static_cast<int8_t*>(p[1]);
    parallel_chunks(pool, batch * out_h, 1, [&](size_t begin, size_t end) {
      for (size_t row = begin; row < end; ++row) {
        const size_t n = row / out_h, oh = row % out_h;
        const int64_t top = static_cast<int64_t>(oh) * window.stride[0] - window.pad_begin[0];
        for (size_t ow = 0; ow < out_w; ++ow) {
          const int64_t left = static_cast<int64_t>(ow) * window.stride[1] - window.pad_begin[1];
          const float multiplier = multipliers[oh * out_w + ow];
          int8_t* dst = out + ((n * out_h + oh) * out_w + ow) * channels;
          for (size_t ch = 0; ch < channels; ++ch) {
            int32_t acc = 0;
            for (int64_t ih = std::max<int64_t>(top, 0); ih < std::min(top + window.kernel[0], height); ++ih)
              for (int64_t iw = std::max<int64_t>(left, 0); iw < std::min(left + window.kernel[1], width); ++iw)
                acc += in[((n * static_cast<size_t>(height) + static_cast<size_t>(ih)) * static_cast<size_t>(width) +
                           static_cast<size_t>(iw)) * channels + ch] - x.zero_point;
            float v = static_cast<float>(acc) * multiplier;
            v = std::clamp(v, -128.0f - static_cast<float>(y.zero_point), 127.0f - static_cast<float>(y.zero_point));
            dst[ch] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + y.zero_point);
          }
        }
      }
    });
  });
}

std::optional<std::string> check_global_avg_pool_int8(const Graph& graph, const Node& node) {
  if (auto reason = check_int8_activation(graph, node.inputs[0])) return reason;
  if (auto reason = check_int8_activation(graph, node.outputs[0])) return reason;
  if (graph.tensor(node.inputs[0]).shape.size() != 4) return std::string("only 4-D input supported");
  const Int8Params x = int8_params(graph.tensor(node.inputs[0])), y = int8_params(graph.tensor(node.outputs[0]));
  const double ratio = static_cast<double>(x.scale) / y.scale;
  if (!int8_limits::kGlobalAvgPool.contains(ratio)) return fmt::format("input/output scale ratio {} not supported", ratio);
  return std::nullopt;
}

void plan_global_avg_pool_int8(NodeContext& c) {
  if (c.int8_vnni()) return plan_global_avg_pool_int8_vnni(c);
  const Shape& shape = c.input_info(0).shape;
  const Int8Params x = int8_params(c.input_info(0)), y = int8_params(c.output_info(0));
  const size_t channels = static_cast<size_t>(shape[1]);
  const size_t batch = static_cast<size_t>(shape[0]), pixels = static_cast<size_t>(shape[2] * shape[3]);
  xnn_operator_t op = c.create_xnn(
      "xnn_create_global_average_pooling_nwc_qs8", xnn_create_global_average_pooling_nwc_qs8, channels, channels,
      channels, static_cast<int8_t>(x.zero_point), x.scale, static_cast<int8_t>(y.zero_point), y.scale, -128, 127, 0);
  const Value xv = c.xnn_input(0, nhwc_layout());
  const Value yv = c.output(0, nhwc_layout());
  c.add_xnn(op, {xv, yv}, [batch, pixels](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return xnn_setup_global_average_pooling_nwc_qs8(o, batch, pixels, static_cast<const int8_t*>(p[0]),
                                                    static_cast<int8_t*>(p[1]), pool);
  });
}

}  // namespace mt::cpu
