// resize (ONNX Resize semantics for nearest / linear / cubic and every coordinate transform in
// the op set). Bilinear resizing of H and W in NHWC, with a transform XNNPACK implements, is
// XNNPACK's resize_bilinear2d; everything else is separable: one pass per resized dim over the
// tensor in memory order, each output row a weighted sum of 1, 2 or 4 input rows whose inner
// elements are contiguous (or, for the innermost dim, of 1, 2 or 4 elements). An upsampling whose
// output is a graph output (DeepLabV3's 21 x 520 x 520 logits) runs separable on the input made
// row-major: the output is written once, in the caller's order. In NHWC through XNNPACK it was
// written, then read and written again by the reordering to the caller's order (4.1 ms of 33 at 1
// thread, and 1.2x faster on 2: memory-bound).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/resize_coords.h"

namespace mt::cpu {
namespace {

// The taps of one resized dim: for each output index, `taps` input indices and weights.
struct Taps {
  size_t taps = 1;
  std::vector<int64_t> index;
  std::vector<float> weight;
};

// The coordinates, nearest rounding and cubic taps are lib/ops/resize_coords.h's, what the
// reference computes. Linear keeps this kernel's edge handling: a coordinate outside the axis
// gives two taps on the edge element with weights 1 - f and f, where resize_taps clamps the
// coordinate first (weights 1 and 0). The sums differ in the last bit at most; keeping them keeps
// the cpu's outputs bit-identical to what they were (checked on every mode, transform and size up
// to 40 -> 40: the same taps and float weights, so cubic and nearest are unchanged too, except
// cubic coordinates more than 3 elements outside the axis, which only scales far from the sizes
// give, and where the reference's clamped coordinate is used now).
Taps taps_for(const ResizeParams& params, size_t axis, int64_t in) {
  const int64_t out = params.sizes[axis];
  Taps t;
  t.taps = params.mode == ResizeMode::nearest ? 1 : (params.mode == ResizeMode::linear ? 2 : 4);
  for (int64_t x = 0; x < out; ++x) {
    if (params.mode == ResizeMode::linear) {
      const double source = source_coordinate(params.coordinate_mode, x, params.scales[axis], in, out);
      const double base = std::floor(source);
      const double f = source - base;
      const auto i0 = static_cast<int64_t>(base);
      t.index.push_back(std::clamp<int64_t>(i0, 0, in - 1));
      t.index.push_back(std::clamp<int64_t>(i0 + 1, 0, in - 1));
      t.weight.push_back(static_cast<float>(1.0 - f));
      t.weight.push_back(static_cast<float>(f));
      continue;
    }
    const ResizeTaps taps = resize_taps(params, axis, in, x);
    for (int k = 0; k < taps.count; ++k) {
      t.index.push_back(taps.index[k]);
      t.weight.push_back(static_cast<float>(taps.weight[k]));
    }
  }
  return t;
}

// One pass: [outer, in, inner] -> [outer, out, inner] along one dim.
struct Pass {
  size_t outer, in, out, inner;
  Taps taps;

  void run(const float* x, float* y, ThreadPool* pool) const {
    if (inner == 1) return run_innermost(x, y, pool);
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

  // The innermost dim: each output element a weighted sum of `taps` elements of its input row, the
  // same sums as run's, by rows (a unit per element cost more than the element).
  void run_innermost(const float* x, float* y, ThreadPool* pool) const {
    parallel_chunks(pool, outer, std::max<size_t>(1, 4096 / std::max<size_t>(1, out)), [&](size_t begin, size_t end) {
      const size_t t = taps.taps;
      for (size_t o = begin; o < end; ++o) {
        const float* row = x + o * in;
        float* destination = y + o * out;
        for (size_t j = 0; j < out; ++j) {
          const int64_t* index = &taps.index[j * t];
          const float* weight = &taps.weight[j * t];
          if (t == 1) destination[j] = row[index[0]];
          else if (t == 2) destination[j] = row[index[0]] * weight[0] + row[index[1]] * weight[1];
          else
            destination[j] = row[index[0]] * weight[0] + row[index[1]] * weight[1] + row[index[2]] * weight[2] +
                             row[index[3]] * weight[3];
        }
      }
    });
  }
};

// The XNNPACK flags for this resize, or nullopt if XNNPACK's bilinear resize does not compute it.
std::optional<uint32_t> xnn_flags(const ResizeParams& params, const Shape& in, const std::vector<double>& scales,
                                  const Layout& layout) {
  const Shape& out = params.sizes;
  if (params.mode != ResizeMode::linear || in.size() != 4 || layout != nhwc_layout() || in[0] != out[0] ||
      in[1] != out[1])
    return std::nullopt;
  const CoordinateMode transform = params.coordinate_mode;
  for (size_t d = 2; d < 4; ++d) {
    // XNNPACK derives the scale from the sizes; the node's must agree.
    if (!scales.empty() && std::abs(scales[d] * in[d] - out[d]) > 1e-6 * out[d]) return std::nullopt;
    if (transform == CoordinateMode::pytorch_half_pixel && out[d] == 1) return std::nullopt;
  }
  switch (transform) {
    case CoordinateMode::half_pixel:
    case CoordinateMode::pytorch_half_pixel: return 0u;
    case CoordinateMode::align_corners: return static_cast<uint32_t>(XNN_FLAG_ALIGN_CORNERS);
    case CoordinateMode::asymmetric: return static_cast<uint32_t>(XNN_FLAG_TENSORFLOW_LEGACY_MODE);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> check_resize(const Graph& graph, const Node& node) {
  // Every mode and coordinate transform of the op (read_resize refuses any other at shape inference).
  return check_float(graph, node);
}

void plan_resize(NodeContext& c) {
  const Shape& in_shape = c.input_info(0).shape;
  const Shape& out_shape = c.output_info(0).shape;
  const size_t rank = in_shape.size();
  // An upsampled graph output: written once, row-major (see the header comment).
  const std::vector<std::string>& outputs = c.graph().outputs;
  const bool row_major = numel(out_shape) > numel(in_shape) &&
                         std::find(outputs.begin(), outputs.end(), c.node().outputs[0]) != outputs.end();
  const Value x0 = row_major ? c.input(0, identity_layout(rank)) : c.input(0);
  const ResizeParams params = read_resize(c.node(), in_shape);
  const std::vector<double>& scales = attr_floats(c.node(), "scales");

  if (auto flags = xnn_flags(params, in_shape, scales, x0.layout)) {
    const auto channels = static_cast<size_t>(in_shape[1]);
    xnn_operator_t op = c.create_xnn("xnn_create_resize_bilinear2d_nhwc_f32", xnn_create_resize_bilinear2d_nhwc_f32,
                                     channels, channels, channels, *flags);
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
    if (!params.resizes_axis(static_cast<size_t>(dim), in_shape[dim])) continue;
    Pass pass{1, static_cast<size_t>(in_shape[dim]), static_cast<size_t>(out_shape[dim]), 1,
              taps_for(params, static_cast<size_t>(dim), in_shape[dim])};
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
    c.add_kernel({x0, y}, [bytes](Pointers p, ThreadPool*) { std::memcpy(p[1], p[0], bytes); });
    return;
  }
  // Intermediate results ping-pong between two scratch buffers sized for the largest.
  size_t largest = 0;
  for (size_t i = 0; i + 1 < passes.size(); ++i)
    largest = std::max(largest, passes[i].outer * passes[i].out * passes[i].inner * sizeof(float));
  std::vector<Value> values{x0, y};
  if (passes.size() > 1) values.push_back(c.scratch(largest));
  if (passes.size() > 2) values.push_back(c.scratch(largest));
  c.add_kernel(values, [passes](Pointers p, ThreadPool* pool) {
    const float* source = static_cast<const float*>(p[0]);
    for (size_t i = 0; i < passes.size(); ++i) {
      float* destination = i + 1 == passes.size() ? static_cast<float*>(p[1]) : static_cast<float*>(p[2 + i % 2]);
      passes[i].run(source, destination, pool);
      source = destination;
    }
  });
}

}  // namespace mt::cpu
