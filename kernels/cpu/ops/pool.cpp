// max_pool2d, avg_pool2d and the global pools on NHWC activations. XNNPACK covers the usual
// cases (ceil_mode becomes extra bottom/right padding, which both of its pools ignore); a
// portable NHWC kernel covers the rest: 1x1 windows, count_include_pad with padding, uint8 max
// pooling (images; padding taps are skipped, as ONNX ignores them). Global
// pools are engines/global_pool.h's average over 4-D NHWC input and reductions otherwise.
#include <algorithm>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "lib/ops/conv_geometry.h"
#include "lib/ops/max_pool_indices.h"
#include "kernels/cpu/engines/global_pool.h"
#include "kernels/cpu/engines/max_pool.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/engines/reduce_loop.h"

namespace mt::cpu {
namespace {

struct Pool2d {
  size_t n, h, w, c, out_h, out_w;
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;  // pb, pr: the node's own padding (no ceil extension)
  bool max, include_pad;
  Window2d window;  // avg only: the divisor's tap counts
};

Pool2d pool_geometry(NodeContext& c, bool max) {
  const Node& node = c.node();
  const Shape& x = c.input_info(0).shape;
  const Shape& y = c.output_info(0).shape;
  const auto& kernel = attr_ints(node, "kernel_shape");
  const auto& strides = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  Pool2d g{static_cast<size_t>(x[0]), static_cast<size_t>(x[2]), static_cast<size_t>(x[3]), static_cast<size_t>(x[1]),
           static_cast<size_t>(y[2]), static_cast<size_t>(y[3]), kernel[0], kernel[1], strides[0], strides[1], 1, 1,
           pads[0], pads[1], pads[2], pads[3], max, false};
  if (max) {
    const auto& dilations = attr_ints(node, "dilations");
    g.dh = dilations[0];
    g.dw = dilations[1];
  } else {
    g.include_pad = attr_int(node, "count_include_pad") != 0;
    g.window = pool_window(node);
  }
  return g;
}

// Bottom/right padding that makes floor-mode arithmetic produce the node's output size.
uint32_t extended_pad(size_t out, int64_t stride, int64_t extent, size_t in, int64_t pad_begin, int64_t pad_end) {
  const int64_t needed = static_cast<int64_t>(out - 1) * stride + extent - static_cast<int64_t>(in) - pad_begin;
  return static_cast<uint32_t>(std::max(pad_end, needed));
}

template <typename T>
void pool_rows(const Pool2d& g, const T* x, T* y, size_t begin, size_t end) {
  const size_t channels = g.c;
  constexpr T lowest =
      std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  for (size_t row = begin; row < end; ++row) {
    const size_t n = row / g.out_h;
    const int64_t oh = static_cast<int64_t>(row % g.out_h);
    for (int64_t ow = 0; ow < static_cast<int64_t>(g.out_w); ++ow) {
      T* out = y + (row * g.out_w + static_cast<size_t>(ow)) * channels;
      std::fill(out, out + channels, g.max ? lowest : T{0});
      for (int64_t i = 0; i < g.kh; ++i) {
        const int64_t ih = oh * g.sh - g.pt + i * g.dh;
        if (ih < 0 || ih >= static_cast<int64_t>(g.h)) continue;
        for (int64_t j = 0; j < g.kw; ++j) {
          const int64_t iw = ow * g.sw - g.pl + j * g.dw;
          if (iw < 0 || iw >= static_cast<int64_t>(g.w)) continue;
          const T* in = x + ((n * g.h + static_cast<size_t>(ih)) * g.w + static_cast<size_t>(iw)) * channels;
          if (g.max) {
            for (size_t ch = 0; ch < channels; ++ch) out[ch] = in[ch] > out[ch] ? in[ch] : out[ch];
          } else {
            for (size_t ch = 0; ch < channels; ++ch) out[ch] += in[ch];
          }
        }
      }
      if constexpr (!std::is_floating_point_v<T>) continue;  // integers: max only
      if (g.max) continue;
      const WindowTaps rows = window_taps(g.window, 0, oh * g.sh - g.pt, static_cast<int64_t>(g.h));
      const WindowTaps columns = window_taps(g.window, 1, ow * g.sw - g.pl, static_cast<int64_t>(g.w));
      const auto divisor =
          static_cast<size_t>(g.include_pad ? rows.padded * columns.padded : rows.valid * columns.valid);
      const float scale = divisor > 0 ? 1.0f / static_cast<float>(divisor) : 0.0f;
      for (size_t ch = 0; ch < channels; ++ch) out[ch] = static_cast<T>(out[ch] * scale);
    }
  }
}

template <typename T>
void plan_portable_pool(NodeContext& c, const Pool2d& g) {
  const Value x = c.input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  c.add_kernel({x, y}, [g](Pointers p, ThreadPool* pool) {
    parallel_chunks(pool, g.n * g.out_h, 1, [&](size_t begin, size_t end) {
      pool_rows(g, static_cast<const T*>(p[0]), static_cast<T*>(p[1]), begin, end);
    });
  });
}

void add_xnn_pool(NodeContext& c, xnn_operator_t op, const Pool2d& g,
                  xnn_status (*setup)(xnn_operator_t, size_t, size_t, size_t, const float*, float*, pthreadpool_t)) {
  const Value x = c.xnn_input(0, nhwc_layout());
  const Value y = c.output(0, nhwc_layout());
  c.add_xnn(op, {x, y}, [g, setup](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return setup(o, g.n, g.h, g.w, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), pool);
  });
}

std::optional<std::string> check_pool_common(const Graph& graph, const Node& node, bool max) {
  if (auto reason = max ? check_dtypes(graph, node, {DType::f32, DType::u8}) : check_float(graph, node)) return reason;
  if (graph.tensor(node.inputs[0]).shape.size() != 4) return std::string("only 4-D input supported");
  if (attr_ints(node, "kernel_shape").size() != 2 || attr_ints(node, "strides").size() != 2 ||
      attr_ints(node, "pads").size() != 4 || (max && attr_ints(node, "dilations").size() != 2))
    return std::string("only 2-D windows supported");
  for (int64_t v : attr_ints(node, "pads"))
    if (v < 0) return fmt::format("negative pad {} not supported", v);
  return std::nullopt;
}

}  // namespace

PackedConvShape max_pool_shape(const NodeContext& c) {
  const Node& node = c.node();
  const Shape& xs = c.input_info(0).shape;  // N, C, H, W
  const Shape& ys = c.output_info(0).shape;
  const auto& k = attr_ints(node, "kernel_shape");
  const auto& st = attr_ints(node, "strides");
  const auto& pads = attr_ints(node, "pads");
  const auto& dil = attr_ints(node, "dilations");
  return PackedConvShape{.n = static_cast<size_t>(xs[0]),
                         .h = static_cast<size_t>(xs[2]),
                         .w = static_cast<size_t>(xs[3]),
                         .channels = static_cast<size_t>(xs[1]),
                         .out_h = static_cast<size_t>(ys[2]),
                         .out_w = static_cast<size_t>(ys[3]),
                         .kernel_h = static_cast<size_t>(k[0]),
                         .kernel_w = static_cast<size_t>(k[1]),
                         .stride_h = static_cast<size_t>(st[0]),
                         .stride_w = static_cast<size_t>(st[1]),
                         .dilation_h = static_cast<size_t>(dil[0]),
                         .dilation_w = static_cast<size_t>(dil[1]),
                         .pad_top = pads[0],
                         .pad_left = pads[1]};
}

std::optional<std::string> check_max_pool2d(const Graph& graph, const Node& node) {
  return check_pool_common(graph, node, true);
}
std::optional<std::string> check_avg_pool2d(const Graph& graph, const Node& node) {
  return check_pool_common(graph, node, false);
}

std::optional<std::string> check_max_pool2d_indices(const Graph& graph, const Node& node) {
  const DType dtype = graph.tensor(node.inputs[0]).dtype;
  if (dtype != DType::f32) return fmt::format("dtype {} not supported", dtype_name(dtype));
  return std::nullopt;
}

// The indices in NCHW order: the input row-major (converted from NHWC when it is so planned).
void plan_max_pool2d_indices(NodeContext& c) {
  const Value x = c.input(0, identity_layout(4));
  const Value y = c.output(0, identity_layout(4));
  const Window2d window = pool_window(c.node());
  const bool column_major = attr_int(c.node(), "storage_order") != 0;
  c.add_kernel({x, y}, [window, column_major, in = x.shape, out = y.shape](Pointers p, ThreadPool*) {
    max_pool2d_indices(window, in, out, column_major, static_cast<const float*>(p[0]), static_cast<int64_t*>(p[1]));
  });
}

void plan_max_pool2d(NodeContext& c) {
  const Pool2d g = pool_geometry(c, true);
  if (c.input_info(0).dtype == DType::u8) return plan_portable_pool<uint8_t>(c, g);
  if (c.packed_gemm() && max_pool_avx512_supported()) {  // see engines/max_pool.h
    const PackedConvShape shape = max_pool_shape(c);
    const Value x = c.input(0, nhwc_layout());
    const Value y = c.output(0, nhwc_layout());
    c.add_kernel({x, y}, [shape](Pointers p, ThreadPool* pool) {
      max_pool(shape, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), pool);
    });
    return;
  }
  const uint32_t pb = extended_pad(g.out_h, g.sh, g.dh * (g.kh - 1) + 1, g.h, g.pt, g.pb);
  const uint32_t pr = extended_pad(g.out_w, g.sw, g.dw * (g.kw - 1) + 1, g.w, g.pl, g.pr);
  const float inf = std::numeric_limits<float>::infinity();
  xnn_operator_t op =
      c.try_create_xnn(xnn_create_max_pooling2d_nhwc_f32, static_cast<uint32_t>(g.pt), pr, pb,
                       static_cast<uint32_t>(g.pl), static_cast<uint32_t>(g.kh), static_cast<uint32_t>(g.kw),
                       static_cast<uint32_t>(g.sh), static_cast<uint32_t>(g.sw), static_cast<uint32_t>(g.dh),
                       static_cast<uint32_t>(g.dw), g.c, g.c, g.c, -inf, inf, 0);
  if (op == nullptr) {
    plan_portable_pool<float>(c, g);  // e.g. 1x1 windows, which XNNPACK refuses
    return;
  }
  add_xnn_pool(c, op, g, xnn_setup_max_pooling2d_nhwc_f32);
}

void plan_avg_pool2d(NodeContext& c) {
  const Pool2d g = pool_geometry(c, false);
  const uint32_t pb = extended_pad(g.out_h, g.sh, g.kh, g.h, g.pt, g.pb);
  const uint32_t pr = extended_pad(g.out_w, g.sw, g.kw, g.w, g.pl, g.pr);
  // XNNPACK divides by the number of input pixels in the window: right unless the node's own
  // padding counts (the ceil_mode overhang never does).
  const bool padded = g.pt > 0 || g.pl > 0 || g.pb > 0 || g.pr > 0;
  const float inf = std::numeric_limits<float>::infinity();
  xnn_operator_t op =
      g.include_pad && padded
          ? nullptr
          : c.try_create_xnn(xnn_create_average_pooling2d_nhwc_f32, static_cast<uint32_t>(g.pt), pr, pb,
                             static_cast<uint32_t>(g.pl), static_cast<uint32_t>(g.kh), static_cast<uint32_t>(g.kw),
                             static_cast<uint32_t>(g.sh), static_cast<uint32_t>(g.sw), g.c, g.c, g.c, -inf, inf, 0);
  if (op == nullptr) {
    plan_portable_pool<float>(c, g);
    return;
  }
  add_xnn_pool(c, op, g, xnn_setup_average_pooling2d_nhwc_f32);
}

std::optional<std::string> check_global_pool(const Graph& graph, const Node& node) {
  if (auto reason = check_float(graph, node)) return reason;
  if (graph.tensor(node.inputs[0]).shape.size() < 2) return std::string("input of rank < 2 not supported");
  return std::nullopt;
}

void plan_global_pool(NodeContext& c) {
  const Shape& shape = c.input_info(0).shape;
  const bool average = c.node().op == "global_avg_pool";
  if (average && shape.size() == 4) {
    const size_t batch = static_cast<size_t>(shape[0]), channels = static_cast<size_t>(shape[1]);
    const size_t pixels = static_cast<size_t>(shape[2] * shape[3]);
    const Value x = c.input(0, nhwc_layout());
    const Value y = c.output(0, nhwc_layout());
    const Value scratch = c.scratch(global_average_pool_scratch_bytes(batch, channels));
    c.add_kernel({x, y, scratch}, [batch, pixels, channels](Pointers p, ThreadPool* pool) {
      global_average_pool(static_cast<const float*>(p[0]), static_cast<float*>(p[1]), batch, pixels, channels, p[2],
                          pool);
    });
    return;
  }
  std::vector<int> axes;
  for (size_t d = 2; d < shape.size(); ++d) axes.push_back(static_cast<int>(d));
  plan_reduction(c, axes, true, average ? ReduceKind::mean : ReduceKind::max);
}

}  // namespace mt::cpu
