// linear (X W^T + B) and matmul. A constant weight matrix becomes an XNNPACK fully connected
// operator (packed once; matmul's [K, N] weights through XNN_FLAG_TRANSPOSE_WEIGHTS), applied to
// every row of X in X's own layout as long as the reduced dim is innermost; on AVX-512 CPUs linear
// runs on our packed GEMM instead, its weights read in place where mt-prepack stored them packed. Weights computed at
// run time go through the portable gemm, batched with numpy broadcasting for matmul.
#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/cpu/engines/gemm.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/engines/permute.h"
#include "lib/ops/broadcast.h"

namespace mt::cpu {
namespace {

// X's layout if its last logical dim is innermost in memory, else row-major.
Layout rows_layout(const Value& x) {
  const size_t rank = x.shape.size();
  if (rank == 0 || x.layout.back() == static_cast<int>(rank - 1)) return x.layout;
  return identity_layout(rank);
}

// An XNNPACK fully connected operator over the rows of input 0 into output 0 (laid out as given).
void plan_fully_connected(NodeContext& c, size_t k, size_t n, const float* weights, const float* bias, uint32_t flags,
                          float low, float high, const Layout& in_layout, const Layout& out_layout) {
  xnn_operator_t op = c.create_xnn("xnn_create_fully_connected_nc_f32", xnn_create_fully_connected_nc_f32, k, n, k, n,
                                   weights, bias, low, high, flags);
  c.count_packed((k * n + n) * sizeof(float));
  const Value x = c.xnn_input(0, in_layout);
  const Value y = c.output(0, out_layout);
  const size_t rows = k == 0 ? 0 : count_of(x) / k;
  c.add_xnn(op, {x, y}, [rows](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
    return xnn_setup_fully_connected_nc_f32(o, rows, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), pool);
  });
}

// Batched C = A B over broadcast batch dims, all row-major.
struct BatchedGemm {
  size_t m = 0, n = 0, k = 0;
  std::vector<size_t> a_offsets, b_offsets;  // per output batch, in elements

  void run(const float* a, const float* b, float* c, const float* bias, ThreadPool* pool) const {
    constexpr size_t kRowBlock = 16;
    const size_t blocks = (m + kRowBlock - 1) / kRowBlock;
    parallel_chunks(pool, a_offsets.size() * blocks, 1, [&](size_t begin, size_t end) {
      for (size_t unit = begin; unit < end; ++unit) {
        const size_t batch = unit / blocks, r0 = unit % blocks * kRowBlock;
        const size_t rows = std::min(kRowBlock, m - r0);
        gemm(rows, n, k, a + a_offsets[batch] + r0 * k, k, b + b_offsets[batch], n, c + (batch * m + r0) * n, n, bias);
      }
    });
  }
};

// Constant weights (and bias), the kernels linear runs them on: our packed GEMM from 16 outputs on
// (packed_gemm.h; its 32-column panels at most double fewer), else XNNPACK's fully connected operator.
bool constant_weights(const Graph& graph, const Node& node) {
  const bool bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  return graph.tensor(node.inputs[1]).is_constant() && (!bias || graph.tensor(node.inputs[2]).is_constant());
}
bool on_packed_gemm(const Graph& graph, const Node& node, const KernelPaths& paths) {
  return paths.packed_gemm && constant_weights(graph, node) && graph.tensor(node.inputs[1]).shape[0] >= 16;
}

}  // namespace

std::optional<CpuLayout> linear_weight_layout(const Graph& graph, const Node& node, size_t input,
                                              const KernelPaths& paths) {
  if (input == 1 && on_packed_gemm(graph, node, paths)) return CpuLayout::gemm;
  return std::nullopt;
}

void pack_linear_weights(const Graph& graph, const Node& node, CpuLayout layout, void* memory) {
  if (layout != CpuLayout::gemm)
    fail(ExitCode::failure, "internal: linear weights in layout '{}'", cpu_layout_tag(layout));
  const TensorInfo& w = graph.tensor(node.inputs[1]);  // N, K
  const auto n = static_cast<size_t>(w.shape[0]), k = static_cast<size_t>(w.shape[1]);
  const bool bias = node.inputs.size() > 2 && !node.inputs[2].empty();
  pack_gemm_weights(memory, w.data.as<float>().data(), k,
                    bias ? graph.tensor(node.inputs[2]).data.as<float>().data() : nullptr, k, n);
}

std::optional<std::string> check_linear(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_linear(NodeContext& c) {
  const Value x0 = c.input(0);
  const Layout layout = rows_layout(x0);
  const size_t k = static_cast<size_t>(x0.shape.back());
  const size_t n = static_cast<size_t>(c.input_info(1).shape[0]);
  const bool has_bias = c.has_input(2);
  const float low = attr_f32(c.node(), "act_min"), high = attr_f32(c.node(), "act_max");
  if (on_packed_gemm(c.graph(), c.node(), c.paths())) {
    const PackedWeights w = packed_gemm_view(packed_weights(c, 1, CpuLayout::gemm), k, n);
    const Value x = c.input(0, layout);
    const Value y = c.output(0, layout);
    const size_t rows = k == 0 ? 0 : count_of(x) / k;
    c.add_kernel({x, y}, [w, rows, k, n, low, high](Pointers p, ThreadPool* pool) {
      packed_gemm(w, rows, static_cast<const float*>(p[0]), k, static_cast<float*>(p[1]), n, low, high, pool);
    });
    return;
  }
  if (c.is_constant(1) && (!has_bias || c.is_constant(2))) {
    plan_fully_connected(c, k, n, c.constant(1).as<float>().data(), has_bias ? c.constant(2).as<float>().data() : nullptr,
                         0, low, high, layout, layout);
    return;
  }
  // Weights computed at run time: transposed to [K, N] into scratch, then the portable gemm.
  std::vector<Value> values{c.input(0, layout), c.input(1, identity_layout(2))};
  if (has_bias) values.push_back(c.input(2, identity_layout(1)));
  values.push_back(c.output(0, layout));
  values.push_back(c.scratch(k * n * sizeof(float)));
  const Permute transpose(Shape{static_cast<int64_t>(n), static_cast<int64_t>(k)}, {1, 0}, sizeof(float));
  const size_t rows = k == 0 ? 0 : count_of(values[0]) / k;
  BatchedGemm gemm{.m = rows, .n = n, .k = k, .a_offsets = {0}, .b_offsets = {0}};
  c.add_kernel(values, [transpose, gemm, has_bias, low, high](Pointers p, ThreadPool* pool) {
    const size_t last = p.size() - 1;
    auto* weights = static_cast<float*>(p[last]);
    transpose.run(p[1], weights, pool);
    auto* out = static_cast<float*>(p[last - 1]);
    gemm.run(static_cast<const float*>(p[0]), weights, out, has_bias ? static_cast<const float*>(p[2]) : nullptr, pool);
    const size_t count = gemm.m * gemm.n;
    for (size_t i = 0; i < count; ++i) out[i] = std::min(std::max(out[i], low), high);  // branchless
  });
}

std::optional<std::string> check_matmul(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_matmul(NodeContext& c) {
  const Shape a_shape = c.input_info(0).shape, b_shape = c.input_info(1).shape;
  const float inf = std::numeric_limits<float>::infinity();
  if (c.is_constant(1) && b_shape.size() <= 2) {
    const size_t k = static_cast<size_t>(b_shape[0]);
    const size_t n = b_shape.size() == 2 ? static_cast<size_t>(b_shape[1]) : 1;
    const Value a0 = c.input(0);
    const Layout in_layout = rows_layout(a0);
    Layout out_layout;
    if (a_shape.size() >= 2 && b_shape.size() == 2) {
      out_layout = in_layout;
    } else if (a_shape.size() >= 2) {
      out_layout.assign(in_layout.begin(), in_layout.end() - 1);  // the innermost dim K disappears
    } else {
      out_layout = identity_layout(c.output_info(0).shape.size());
    }
    plan_fully_connected(c, k, n, c.constant(1).as<float>().data(), nullptr, XNN_FLAG_TRANSPOSE_WEIGHTS, -inf, inf,
                         in_layout, out_layout);
    return;
  }

  // numpy matmul: 1-D operands promoted ([K] -> [1, K] or [K, 1]), batch dims broadcast.
  Shape a = a_shape, b = b_shape;
  if (a.size() == 1) a = {1, a[0]};
  if (b.size() == 1) b = {b[0], 1};
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const Shape batch = *broadcast_shapes(a_batch, b_batch);
  const auto a_strides = broadcast_strides(a_batch, batch), b_strides = broadcast_strides(b_batch, batch);
  BatchedGemm gemm{.m = static_cast<size_t>(a[a.size() - 2]), .n = static_cast<size_t>(b.back()),
                   .k = static_cast<size_t>(a.back())};
  const int64_t batches = numel(batch);
  const auto a_matrix = static_cast<int64_t>(gemm.m * gemm.k), b_matrix = static_cast<int64_t>(gemm.k * gemm.n);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rest = i, a_offset = 0, b_offset = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t index = rest % batch[d];
      rest /= batch[d];
      a_offset += index * a_strides[d];
      b_offset += index * b_strides[d];
    }
    gemm.a_offsets.push_back(static_cast<size_t>(a_offset * a_matrix));
    gemm.b_offsets.push_back(static_cast<size_t>(b_offset * b_matrix));
  }
  const Value va = c.input(0, identity_layout(a_shape.size()));
  const Value vb = c.input(1, identity_layout(b_shape.size()));
  const Value y = c.output(0, identity_layout(c.output_info(0).shape.size()));
  c.add_kernel({va, vb, y}, [gemm](Pointers p, ThreadPool* pool) {
    gemm.run(static_cast<const float*>(p[0]), static_cast<const float*>(p[1]), static_cast<float*>(p[2]), nullptr, pool);
  });
}

}  // namespace mt::cpu
