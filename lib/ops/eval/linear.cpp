// Reference kernels of the linear family, float32, accumulating dot products in double.
#include <algorithm>
#include <cmath>
#include <limits>

#include "lib/ops/broadcast.h"
#include "lib/ops/eval/kernel_util.h"
#include "lib/ops/eval/reference.h"
#include "lib/ops/matrix_loops.h"
#include "lib/ops/registry.h"

namespace mt::reference {
namespace {

void linear(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  for (const auto& input : inputs)
    if (input.info != nullptr) require_dtype(node, *input.info, DType::f32);
  const Shape& x_shape = inputs[0].info->shape;
  const int64_t k_size = x_shape.back();
  const int64_t n_size = inputs[1].info->shape[0];
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x_shape.size(); ++d) rows *= x_shape[d];
  const bool has_bias = inputs.size() > 2 && inputs[2].info != nullptr;
  const ActivationBounds bounds = activation_bounds(node);
  const float* x = inputs[0].as<float>();
  const float* w = inputs[1].as<float>();
  const float* b = has_bias ? inputs[2].as<float>() : nullptr;
  float* y = outputs[0].as<float>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t n = 0; n < n_size; ++n) {
      double sum = has_bias ? b[n] : 0.0;
      for (int64_t k = 0; k < k_size; ++k) sum += static_cast<double>(x[r * k_size + k]) * w[n * k_size + k];
      y[r * n_size + n] = static_cast<float>(bounds.apply(sum));
    }
  }
}

void matmul(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  require_dtype(node, *inputs[1].info, DType::f32);
  // Promote 1-D operands as numpy does: A [K] -> [1, K], B [K] -> [K, 1].
  Shape a = inputs[0].info->shape;
  Shape b = inputs[1].info->shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t m_size = a[a.size() - 2];
  const int64_t k_size = a.back();
  const int64_t n_size = b.back();
  const Shape batch_a(a.begin(), a.end() - 2);
  const Shape batch_b(b.begin(), b.end() - 2);
  const Shape batch = *broadcast_shapes(batch_a, batch_b);
  // Strides in whole matrices: which A and B matrix each output matrix multiplies.
  const std::array<std::vector<int64_t>, 2> strides{broadcast_strides(batch_a, batch), broadcast_strides(batch_b, batch)};
  const float* a_data = inputs[0].as<float>();
  const float* b_data = inputs[1].as<float>();
  float* y = outputs[0].as<float>();
  for_each_broadcast(batch, strides, [&](int64_t i, const std::array<int64_t, 2>& o) {
    const float* a_mat = a_data + o[0] * m_size * k_size;
    const float* b_mat = b_data + o[1] * k_size * n_size;
    float* y_mat = y + i * m_size * n_size;
    for (int64_t m = 0; m < m_size; ++m) {
      for (int64_t n = 0; n < n_size; ++n) {
        double sum = 0;
        for (int64_t k = 0; k < k_size; ++k) sum += static_cast<double>(a_mat[m * k_size + k]) * b_mat[k * n_size + n];
        y_mat[m * n_size + n] = static_cast<float>(sum);
      }
    }
  });
}

// lib/ops/matrix_loops.h: the cpu backend runs the same loop.
void det(const Node& node, std::span<const ConstView> inputs, std::span<const MutView> outputs) {
  require_dtype(node, *inputs[0].info, DType::f32);
  const Shape& shape = inputs[0].info->shape;
  determinants(outputs[0].info->numel(), shape.back(), inputs[0].as<float>(), outputs[0].as<float>());
}

}  // namespace

void register_linear_kernels(KernelTable& table) {
  table.add("linear", linear);
  table.add("matmul", matmul);
  table.add("det", det);
}

}  // namespace mt::reference
