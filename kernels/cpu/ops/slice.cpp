// slice (ONNX semantics: negative indices, clamping, negative steps) in the input's layout. A
// slice that is one contiguous block of its input is a view; otherwise a strided copy whose
// innermost run is a memcpy whenever the innermost dim is taken with step 1.
#include <algorithm>
#include <cstring>

#include "kernels/cpu/engines/strided_walk.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/slice_params.h"

namespace mt::cpu {
namespace {

// The slice in memory order: loop dims with the input's and the output's strides, the innermost
// run separate (a memcpy when it is taken with step 1).
struct StridedCopy {
  using Dim = LoopDim<2>;  // strides of in, out
  std::vector<Dim> outer;
  Dim inner{1, {1, 1}};
  int64_t start = 0;  // elements into the input
  size_t element = 4;
  size_t rows = 1;

  void run(const std::byte* in, std::byte* out, ThreadPool* pool) const {
    const size_t row_bytes = static_cast<size_t>(inner.size) * element;
    const auto element_bytes = static_cast<int64_t>(element);
    const size_t min_rows = std::max<size_t>(1, 16384 / std::max<size_t>(1, row_bytes));
    parallel_chunks(pool, rows, min_rows, [&](size_t begin, size_t end) {
      StridedWalk<2> walk(outer, begin, {start, 0});
      for (size_t row = begin; row < end; ++row, walk.next()) {
        const std::byte* source = in + walk[0] * element_bytes;
        std::byte* destination = out + walk[1] * element_bytes;
        if (inner.stride[0] == 1) {
          std::memcpy(destination, source, row_bytes);
        } else {
          for (int64_t i = 0; i < inner.size; ++i)
            std::memcpy(destination + i * element_bytes, source + i * inner.stride[0] * element_bytes, element);
        }
      }
    });
  }
};

}  // namespace

std::optional<std::string> check_slice(const Graph&, const Node&) { return std::nullopt; }

void plan_slice(NodeContext& c) {
  const Value x = c.input(0);
  const size_t rank = x.shape.size();
  const Shape& out_shape = c.output_info(0).shape;
  // Per logical dim: first index, step and count (ONNX resolution, shared with shape inference).
  const std::vector<SliceAxis> axes = resolve_slice(c.node(), x.shape);

  // Row-major strides of the input in memory, then the slice as a strided copy in memory order.
  const Shape physical = x.physical();
  std::vector<int64_t> strides(rank, 1);
  for (size_t k = rank; k-- > 1;) strides[k - 1] = strides[k] * physical[k];
  StridedCopy copy;
  copy.element = dtype_size(x.dtype);
  std::vector<LoopDim<2>> dims;
  int64_t out_stride = 1;
  std::vector<int64_t> out_strides(rank);
  for (size_t k = rank; k-- > 0;) {
    out_strides[k] = out_stride;
    out_stride *= out_shape[x.layout[k]];
  }
  for (size_t k = 0; k < rank; ++k) {
    const int dim = x.layout[k];
    copy.start += axes[dim].start * strides[k];
    append_merged(dims, {out_shape[dim], {strides[k] * axes[dim].step, out_strides[k]}});
  }
  const bool empty = numel(out_shape) == 0;
  // One contiguous block: a view at an offset.
  if (!empty && (dims.empty() || (dims.size() == 1 && dims[0].stride[0] == 1))) {
    c.alias(0, x, x.layout, static_cast<size_t>(copy.start) * copy.element);
    return;
  }
  const Value y = c.output(0, x.layout);
  if (empty) return;
  copy.inner = dims.back();
  dims.pop_back();
  check_loop_depth(dims, fmt::format("node '{}': slice", c.node().name));
  for (const auto& d : dims) copy.rows *= static_cast<size_t>(d.size);
  copy.outer = std::move(dims);
  c.add_kernel({x, y}, [copy](Pointers p, ThreadPool* pool) {
    copy.run(static_cast<const std::byte*>(p[0]), static_cast<std::byte*>(p[1]), pool);
  });
}

}  // namespace mt::cpu
