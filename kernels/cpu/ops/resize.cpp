// resize (ONNX Resize semantics for nearest / linear / cubic and every coordinate transform in
// the op set). Bilinear resizing of H and W in NHWC, with a transform XNNPACK implements, is
// XNNPACK's resize_bilinear2d; everything else is separable: one pass per resized dim over the
// tensor in memory order, each output row a weighted sum of 1, 2 or 4 input rows whose inner
// elements are contiguous.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

struct Options {
  std::string mode, transform, nearest;
  float cubic_a;
  bool exclude_outside;
};

Options options_of(const Node& node) {
  return Options{attr_string(node, "mode"), attr_string(node, "coordinate_transformation_mode"),
                 attr_string(node, "nearest_mode"), attr_f32(node, "cubic_coeff_a"),
                 attr_int(node, "exclude_outside") != 0};
}

// Input coordinate of output index x along one dim.
double source_coordinate(const std::string& transform, int64_t x, int64_t in, int64_t out, double scale) {
  if (transform == "align_corners") return out == 1 ? 0.0 : static_cast<double>(x) * (in - 1) / (out - 1);
  if (transform == "asymmetric") return x / scale;
  if (transform == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  if (transform == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

int64_t round_nearest(const std::string& mode, double x) {
  if (mode == "floor") return static_cast<int64_t>(std::floor(x));
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (mode == "round_prefer_ceil") return static_cast<int64_t>(std::floor(x + 0.5));
  return static_cast<int64_t>(std::ceil(x - 0.5));  // round_prefer_floor
}

// The taps of one resized dim: for each output index, `taps` input indices and weights.
struct Taps {
  size_t taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

Taps taps_for(const Options& o, int64_t in, int64_t out, double scale) {
  Taps t;
  t.taps = o.mode == "nearest" ? 1 : (o.mode == "linear" ? 2 : 4);
  for (int64_t x = 0; x < out; ++x) {
    const double source = source_coordinate(o.transform, x, in, out, scale);
    if (o.mode == "nearest") {
      t.index.push_back(std::clamp<int64_t>(round_nearest(o.nearest, source), 0, in - 1));
      t.weight.push_back(1.0f);
      continue;
    }
    const double base = std::floor(source);
    const double f = source - base;
    const auto i0 = static_cast<int64_t>(base);
    if (o.mode == "linear") {
      t.index.push_back(std::clamp<int64_t>(i0, 0, in - 1));
      t.index.push_back(std::clamp<int64_t>(i0 + 1, 0, in - 1));
      t.weight.push_back(static_cast<float>(1.0 - f));
      t.weight.push_back(static_cast<float>(f));
      continue;
    }
    // Cubic convolution (Keys) with coefficient a over indices i0-1 .. i0+2.
    const double a = o.cubic_a;
    const double d[4] = {1.0 + f, f, 1.0 - f, 2.0 - f};
    double w[4];
    for (int k = 0; k < 4; ++k) {
      const double s = d[k];
      w[k] = s <= 1.0 ? ((a + 2.0) * s - (a + 3.0)) * s * s + 1.0 : ((a * s - 5.0 * a) * s + 8.0 * a) * s - 4.0 * a;
    }
    double total = 0.0;
    for (int k = 0; k < 4; ++k) {
      const int64_t i = i0 - 1 + k;
      if (o.exclude_outside && (i < 0 || i >= in)) w[k] = 0.0;
      total += w[k];
    }
    for (int k = 0; k < 4; ++k) {
      t.index.push_back(std::clamp<int64_t>(i0 - 1 + k, 0, in - 1));
      t.weight.push_back(static_cast<float>(o.exclude_outside && total != 0.0 ? w[k] / total : w[k]));
    }
  }
  return t;
}

// One pass: [outer, in, inner] -> [outer, out, inner] along one dim.
struct Pass {
  size_t outer, in, out, inner;
  Taps taps;

  void run(const float* x, float* y, pthreadpool_t pool) const {
    parallel_chunks(pool, outer * out, std::max<size_t>(1, 4096 / std::max<size_t>(1, inner)), [&](size_t begin, size_t end) {
      for (size_t unit = begin; unit < end; ++unit) {
        const size_t o = unit / out, j = unit % out;
        float* destination = y + unit * inner;
        const float* block = x + o * in * inner;
        const int64_t* index = &taps.index[j * taps.taps];
        const float* weight = &taps.weight[j * taps.taps];
        if (taps.taps == 1) {
          std::memcpy(destination, block + static_cast<size_t>(index[0]) * inner, inner * sizeof(float));
        } else if (taps.taps == 2) {
          const float* r0 = block + static_cast<size_t>(index[0]) * inner;
          const float* r1 = block + static_cast<size_t>(index[1]) * inner;
          const float w0 = weight[0], w1 = weight[1];
          for (size_t i = 0; i < inner; ++i) destination[i] = r0[i] * w0 + r1[i] * w1;
        } else {
          const float* r0 = block + static_cast<size_t>(index[0]) * inner;
          const float* r1 = block + static_cast<size_t>(index[1]) * inner;
          const float* r2 = block + static_cast<size_t>(index[2]) * inner;
          const float* r3 = block + static_cast<size_t>(index[3]) * inner;
          const float w0 = weight[0], w1 = weight[1], w2 = weight[2], w3 = weight[3];
          for (size_t i = 0; i < inner; ++i) destination[i] = r0[i] * w0 + r1[i] * w1 + r2[i] * w2 + r3[i] * w3;
        }
      }
    });
  }
};

// The XNNPACK flags for this resize, or nullopt if XNNPACK's bilinear resize does not compute it.
std::optional<uint32_t> xnn_flags(const Options& o, const Shape& in, const Shape& out, const std::vector<double>& scales,
                                  const Layout& layout) {
  if (o.mode != "linear" || in.size() != 4 || layout != nhwc_layout() || in[0] != out[0] || in[1] != out[1])
    return std::nullopt;
  for (size_t d = 2; d < 4; ++d) {
    // XNNPACK derives the scale from the sizes; the node's must agree.
    if (!scales.empty() && std::abs(scales[d] * in[d] - out[d]) > 1e-6 * out[d]) return std::nullopt;
    if (o.transform == "pytorch_half_pixel" && out[d] == 1) return std::nullopt;
  }
  if (o.transform == "half_pixel" || o.transform == "pytorch_half_pixel") return 0u;
  if (o.transform == "align_corners") return static_cast<uint32_t>(XNN_FLAG_ALIGN_CORNERS);
  if (o.transform == "asymmetric") return static_cast<uint32_t>(XNN_FLAG_TENSORFLOW_LEGACY_MODE);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> check_resize(const Graph& graph, const Node& node) {
  if (auto reason = check_float(graph, node)) return reason;
  const Options o = options_of(node);
  if (o.mode != "nearest" && o.mode != "linear" && o.mode != "cubic") return fmt::format("mode \"{}\" not supported", o.mode);
  for (const char* t : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn"})
    if (o.transform == t) return std::nullopt;
  return fmt::format("coordinate_transformation_mode \"{}\" not supported", o.transform);
}

void plan_resize(NodeContext& c) {
  const Options o = options_of(c.node());
  const Value x0 = c.input(0);
  const Shape& in_shape = x0.shape;
  const Shape& out_shape = c.output_info(0).shape;
  const std::vector<double>& scales = attr_floats(c.node(), "scales");
  const size_t rank = in_shape.size();

  if (auto flags = xnn_flags(o, in_shape, out_shape, scales, x0.layout)) {
    xnn_operator_t op = nullptr;
    const auto channels = static_cast<size_t>(in_shape[1]);
    c.check(xnn_create_resize_bilinear2d_nhwc_f32(channels, channels, channels, *flags, &op),
            "xnn_create_resize_bilinear2d_nhwc_f32");
    const Value x = c.xnn_input(0, nhwc_layout());
    const Value y = c.output(0, nhwc_layout());
    const size_t n = static_cast<size_t>(in_shape[0]), ih = static_cast<size_t>(in_shape[2]),
                 iw = static_cast<size_t>(in_shape[3]), oh = static_cast<size_t>(out_shape[2]),
                 ow = static_cast<size_t>(out_shape[3]);
    c.add_xnn(op, {x, y}, [=](xnn_operator_t op_, Pointers p, pthreadpool_t pool) {
      return xnn_setup_resize_bilinear2d_nhwc_f32(op_, n, ih, iw, oh, ow, static_cast<const float*>(p[0]),
                                                  static_cast<float*>(p[1]), pool);
    });
    return;
  }

  // Separable passes in memory order, innermost resized dim first.
  const Layout& layout = x0.layout;
  Shape current = x0.physical();
  std::vector<Pass> passes;
  for (size_t k = rank; k-- > 0;) {
    const int dim = layout[k];
    const double scale = scales.empty() ? static_cast<double>(out_shape[dim]) / in_shape[dim] : scales[dim];
    if (in_shape[dim] == out_shape[dim] && (scales.empty() || scale == 1.0)) continue;
    if (in_shape[dim] == 0 || out_shape[dim] == 0) continue;
    Pass pass{1, static_cast<size_t>(in_shape[dim]), static_cast<size_t>(out_shape[dim]), 1,
              taps_for(o, in_shape[dim], out_shape[dim], scale)};
    for (size_t m = 0; m < rank; ++m) {
      if (m < k) pass.outer *= static_cast<size_t>(current[m]);
      if (m > k) pass.inner *= static_cast<size_t>(current[m]);
    }
    current[k] = out_shape[dim];
    passes.push_back(std::move(pass));
  }
  const Value y = c.output(0, layout);
  if (passes.empty() || numel(out_shape) == 0) {
    const size_t bytes = y.bytes();
    c.add_kernel({x0, y}, [bytes](Pointers p, pthreadpool_t) { std::memcpy(p[1], p[0], bytes); });
    return;
  }
  // Intermediate results ping-pong between two scratch buffers sized for the largest.
  size_t largest = 0;
  for (size_t i = 0; i + 1 < passes.size(); ++i)
    largest = std::max(largest, passes[i].outer * passes[i].out * passes[i].inner * sizeof(float));
  std::vector<Value> values{x0, y};
  if (passes.size() > 1) values.push_back(c.scratch(largest));
  if (passes.size() > 2) values.push_back(c.scratch(largest));
  c.add_kernel(values, [passes](Pointers p, pthreadpool_t pool) {
    const float* source = static_cast<const float*>(p[0]);
    for (size_t i = 0; i < passes.size(); ++i) {
      float* destination = i + 1 == passes.size() ? static_cast<float*>(p[1]) : static_cast<float*>(p[2 + i % 2]);
      passes[i].run(source, destination, pool);
      source = destination;
    }
  });
}

}  // namespace mt::cpu
