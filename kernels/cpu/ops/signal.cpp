// The signal family (dft, reverse_sequence) and det: the loops of lib/ops/signal_loops.h and
// matrix_loops.h, the reference kernels' own so the backends agree exactly, on row-major tensors,
// with their parameters (the DFT's twiddle factors) computed once here. dft splits its signals over
// the thread pool; reverse_sequence checks the lengths on every run, before any write.
#include <string>

#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/matrix_loops.h"
#include "lib/ops/signal_loops.h"

namespace mt::cpu {
namespace {

Value row_major_input(NodeContext& c, size_t i) { return c.input(i, identity_layout(c.input_info(i).shape.size())); }
Value row_major_output(NodeContext& c) { return c.output(0, identity_layout(c.output_info(0).shape.size())); }

}  // namespace

std::optional<std::string> check_dft(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_dft(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const Value y = row_major_output(c);
  const size_t axis = static_cast<size_t>(axis_of(c.node(), attr_int(c.node(), "axis"), x.shape.size() - 1));
  const int64_t length = attr_int(c.node(), "length") != 0 ? attr_int(c.node(), "length") : x.shape[axis];
  const DftParams params =
      dft_params(x.shape, axis, length, attr_int(c.node(), "onesided") != 0, attr_int(c.node(), "inverse") != 0);
  c.add_kernel({x, y}, [params](Pointers p, ThreadPool* pool) {
    parallel_chunks(pool, static_cast<size_t>(params.outer * params.inner), 1, [&](size_t begin, size_t end) {
      dft(params, static_cast<const float*>(p[0]), static_cast<float*>(p[1]), static_cast<int64_t>(begin),
          static_cast<int64_t>(end));
    });
  });
}

std::optional<std::string> check_reverse_sequence(const Graph&, const Node&) { return std::nullopt; }

void plan_reverse_sequence(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const Value lengths = row_major_input(c, 1);
  const Value y = row_major_output(c);
  ReverseSequenceParams params;
  params.batch_major = attr_int(c.node(), "batch_axis") == 0;
  params.steps = x.shape[params.batch_major ? 1 : 0];
  params.batch = x.shape[params.batch_major ? 0 : 1];
  for (size_t d = 2; d < x.shape.size(); ++d) params.inner *= x.shape[d];
  params.element = dtype_size(x.dtype);
  const bool wide = lengths.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({x, lengths, y}, [params, wide, name](Pointers p, ThreadPool*) {
    reverse_sequence(params, name, p[0], {p[1], wide}, p[2]);
  });
}

std::optional<std::string> check_det(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_det(NodeContext& c) {
  const Value x = row_major_input(c, 0);
  const Value y = row_major_output(c);
  const int64_t count = numel(y.shape), n = x.shape.back();
  c.add_kernel({x, y}, [count, n](Pointers p, ThreadPool*) {
    determinants(count, n, static_cast<const float*>(p[0]), static_cast<float*>(p[1]));
  });
}

}  // namespace mt::cpu
