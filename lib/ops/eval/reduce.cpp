// Reference kernels of the reduce family, float32, accumulating in double. The axis loops
// (argmax/argmin, hardmax, cumsum, top_k) are lib/ops/axis_loops.h, which the cpu backend runs too.
#include <cmath>
#include <limits>
#include <vector>

#include "lib/ops/axis_loops.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

enum class Reduction { mean, sum, max, min, l1, l2, sum_square, log_sum, log_sum_exp, prod };

constexpr bool is_extreme(Reduction r) { return r == Reduction::max || r == Reduction::min; }

template <Reduction R>
void reduce_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const Shape& in_shape = inputs[0].info->shape;
  const size_t rank = in_shape.size();
  const std::vector<int64_t>& axes = attr_ints(node, "axes");
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) reduced[static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis)] = true;

  // Where each input element lands in the output: the row-major strides of the kept dims,
  // 0 along reduced dims (the output's size-1 dims under keepdims change nothing).
  std::vector<int64_t> out_strides(rank, 0);
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) continue;
    out_strides[d] = stride;
    stride *= in_shape[d];
  }
  const int64_t out_count = outputs[0].info->numel();
  const int64_t in_count = inputs[0].info->numel();

  double initial = 0;
  if (R == Reduction::max) initial = -std::numeric_limits<double>::infinity();
  if (R == Reduction::min) initial = std::numeric_limits<double>::infinity();
  if (R == Reduction::prod) initial = 1;
  std::vector<double> acc(static_cast<size_t>(out_count), initial);
  const float* x = inputs[0].as<float>();
  const std::array<std::vector<int64_t>, 1> strides{out_strides};
  // log_sum_exp sums exp(x - m) with m the maximum of its group (finite, else 0), then adds m
  // back: the same value as log(sum(exp(x))) without overflowing exp.
  std::vector<double> shift(R == Reduction::log_sum_exp ? static_cast<size_t>(out_count) : 0,
                            -std::numeric_limits<double>::infinity());
  if constexpr (R == Reduction::log_sum_exp) {
    for_each_broadcast(in_shape, strides, [&](int64_t i, const std::array<int64_t, 1>& o) {
      double& m = shift[static_cast<size_t>(o[0])];
      m = std::max(m, static_cast<double>(x[i]));
    });
    for (double& m : shift)
      if (!std::isfinite(m)) m = 0;
  }
  for_each_broadcast(in_shape, strides, [&](int64_t i, const std::array<int64_t, 1>& o) {
    const double v = x[i];
    double& a = acc[static_cast<size_t>(o[0])];
    if constexpr (!is_extreme(R)) {
      if constexpr (R == Reduction::l1) a += std::fabs(v);
      else if constexpr (R == Reduction::l2 || R == Reduction::sum_square) a += v * v;
      else if constexpr (R == Reduction::log_sum_exp) a += std::exp(v - shift[static_cast<size_t>(o[0])]);
      else if constexpr (R == Reduction::prod) a *= v;
      else a += v;
    } else if (std::isnan(v) || std::isnan(a)) {
      a = std::numeric_limits<double>::quiet_NaN();  // NaN wins, as in torch.amax
    } else {
      a = R == Reduction::max ? std::max(a, v) : std::min(a, v);
    }
  });
  // Elements per output; 0 when a reduced axis is empty (mean is then NaN, as 0/0).
  const double count = out_count == 0 ? 0.0 : static_cast<double>(in_count / out_count);
  float* y = outputs[0].as<float>();
  for (int64_t i = 0; i < out_count; ++i) {
    const double a = acc[static_cast<size_t>(i)];
    double result = a;
    if (R == Reduction::mean) result = a / count;
    if (R == Reduction::l2) result = std::sqrt(a);
    if (R == Reduction::log_sum) result = std::log(a);
    if (R == Reduction::log_sum_exp) result = std::log(a) + shift[static_cast<size_t>(i)];
    y[i] = static_cast<float>(result);
  }
}

// softmax (log = false) or log_softmax (log = true) along the node's axis.
template <bool Log>
void softmax_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const Shape& shape = inputs[0].info->shape;
  const auto rank = static_cast<int64_t>(shape.size());
  int64_t axis = attr_int(node, "axis");
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  const float* x = inputs[0].as<float>();
  float* y = outputs[0].as<float>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      // Subtracting the maximum keeps exp() from overflowing; the result is unchanged.
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < n; ++k) max = std::max(max, static_cast<double>(x[base + k * inner]));
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(x[base + k * inner] - max);
      for (int64_t k = 0; k < n; ++k) {
        const double shifted = x[base + k * inner] - max;
        y[base + k * inner] = static_cast<float>(Log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  }
}

// The node's 'axis' normalised, and input 0 viewed along it.
AxisView node_axis_view(const Node& node, const Shape& shape) {
  int64_t axis = attr_int(node, "axis");
  if (axis < 0) axis += static_cast<int64_t>(shape.size());
  return axis_view(shape, static_cast<size_t>(axis));
}

template <bool Max>
void arg_extreme_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const AxisView view = node_axis_view(node, inputs[0].info->shape);
  arg_extreme(inputs[0].as<float>(), outputs[0].as<int64_t>(), view, view.outer, Max,
              attr_int(node, "select_last_index") != 0);
}

void hardmax_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const AxisView view = node_axis_view(node, inputs[0].info->shape);
  hardmax(inputs[0].as<float>(), outputs[0].as<float>(), view, view.outer);
}

void top_k_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const AxisView view = node_axis_view(node, inputs[0].info->shape);
  top_k(inputs[0].as<float>(), outputs[0].as<float>(), outputs[1].as<int64_t>(), view, view.outer, attr_int(node, "k"),
        attr_int(node, "largest") != 0);
}

void cumsum_kernel(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  const AxisView view = node_axis_view(node, inputs[0].info->shape);
  const bool exclusive = attr_int(node, "exclusive") != 0;
  const bool reverse = attr_int(node, "reverse") != 0;
  switch (inputs[0].info->dtype) {
    case DType::f32: cumsum(inputs[0].as<float>(), outputs[0].as<float>(), view, view.outer, exclusive, reverse); break;
    case DType::i32:
      cumsum(inputs[0].as<int32_t>(), outputs[0].as<int32_t>(), view, view.outer, exclusive, reverse);
      break;
    case DType::i64:
      cumsum(inputs[0].as<int64_t>(), outputs[0].as<int64_t>(), view, view.outer, exclusive, reverse);
      break;
    default:
      unsupported("node '{}' (cumsum): the reference kernel supports float32, int32 and int64, not {}", node.name,
                  dtype_name(inputs[0].info->dtype));
  }
}

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  table.add("reduce_mean", reduce_kernel<Reduction::mean>);
  table.add("reduce_sum", reduce_kernel<Reduction::sum>);
  table.add("reduce_max", reduce_kernel<Reduction::max>);
  table.add("reduce_min", reduce_kernel<Reduction::min>);
  table.add("softmax", softmax_kernel<false>);
  table.add("log_softmax", softmax_kernel<true>);
  table.add("reduce_l1", reduce_kernel<Reduction::l1>);
  table.add("reduce_l2", reduce_kernel<Reduction::l2>);
  table.add("reduce_sum_square", reduce_kernel<Reduction::sum_square>);
  table.add("reduce_log_sum", reduce_kernel<Reduction::log_sum>);
  table.add("reduce_log_sum_exp", reduce_kernel<Reduction::log_sum_exp>);
  table.add("reduce_prod", reduce_kernel<Reduction::prod>);
  table.add("hardmax", hardmax_kernel);
  table.add("argmax", arg_extreme_kernel<true>);
  table.add("argmin", arg_extreme_kernel<false>);
  table.add("cumsum", cumsum_kernel);
  table.add("top_k", top_k_kernel);
}

}  // namespace mt::reference
