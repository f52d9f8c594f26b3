// Reference kernels of the reduce family, float32, accumulating in double.
#include <cmath>
#include <limits>
#include <vector>

#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

enum class Reduction { mean, sum, max, min };

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
  std::vector<double> acc(static_cast<size_t>(out_count), initial);
  const float* x = inputs[0].as<float>();
  const std::array<std::vector<int64_t>, 1> strides{out_strides};
  for_each_broadcast(in_shape, strides, [&](int64_t i, const std::array<int64_t, 1>& o) {
    const double v = x[i];
    double& a = acc[static_cast<size_t>(o[0])];
    if constexpr (R == Reduction::mean || R == Reduction::sum) {
      a += v;
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
    y[i] = static_cast<float>(R == Reduction::mean ? a / count : a);
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

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  table.add("reduce_mean", reduce_kernel<Reduction::mean>);
  table.add("reduce_sum", reduce_kernel<Reduction::sum>);
  table.add("reduce_max", reduce_kernel<Reduction::max>);
  table.add("reduce_min", reduce_kernel<Reduction::min>);
  table.add("softmax", softmax_kernel<false>);
  table.add("log_softmax", softmax_kernel<true>);
}

}  // namespace mt::reference
