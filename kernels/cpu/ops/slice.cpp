// slice (ONNX semantics: negative indices, clamping, negative steps) in the input's layout. A
// slice that is one contiguous block of its input is a view; otherwise a strided copy whose
// innermost run is a memcpy whenever the innermost dim is taken with step 1.
#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

constexpr size_t kMaxDims = 16;

struct StridedCopy {
  struct Dim {
    int64_t size, in_stride, out_stride;  // elements
  };
  std::vector<Dim> outer;
  Dim inner{1, 1, 1};
  int64_t start = 0;  // elements into the input
  size_t element = 4;
  size_t rows = 1;

  void run(const std::byte* in, std::byte* out, pthreadpool_t pool) const {
    const size_t row_bytes = static_cast<size_t>(inner.size) * element;
    parallel_chunks(pool, rows, std::max<size_t>(1, 16384 / std::max<size_t>(1, row_bytes)), [&](size_t begin, size_t end) {
      int64_t index[kMaxDims] = {};
      int64_t in_offset = start, out_offset = 0;
      size_t rest = begin;
      for (size_t d = outer.size(); d-- > 0;) {
        index[d] = static_cast<int64_t>(rest % static_cast<size_t>(outer[d].size));
        rest /= static_cast<size_t>(outer[d].size);
        in_offset += index[d] * outer[d].in_stride;
        out_offset += index[d] * outer[d].out_stride;
      }
      for (size_t row = begin; row < end; ++row) {
        const std::byte* source = in + in_offset * static_cast<int64_t>(element);
        std::byte* destination = out + out_offset * static_cast<int64_t>(element);
        if (inner.in_stride == 1) {
          std::memcpy(destination, source, row_bytes);
        } else {
          for (int64_t i = 0; i < inner.size; ++i)
            std::memcpy(destination + i * static_cast<int64_t>(element),
                        source + i * inner.in_stride * static_cast<int64_t>(element), element);
        }
        for (size_t d = outer.size(); d-- > 0;) {
          in_offset += outer[d].in_stride;
          out_offset += outer[d].out_stride;
          if (++index[d] < outer[d].size) break;
          in_offset -= outer[d].size * outer[d].in_stride;
          out_offset -= outer[d].size * outer[d].out_stride;
          index[d] = 0;
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
  const auto& starts = attr_ints(c.node(), "starts");
  const auto& axes_attr = attr_ints(c.node(), "axes");
  const auto& steps_attr = attr_ints(c.node(), "steps");

  // Per logical dim: first index and step (dims not sliced: 0 and 1).
  std::vector<int64_t> first(rank, 0), step(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    const int axis = axes_attr.empty() ? static_cast<int>(i) : axis_of(c.node(), axes_attr[i], rank);
    const int64_t dim = x.shape[axis];
    const int64_t s = steps_attr.empty() ? 1 : steps_attr[i];
    int64_t begin = starts[i] < 0 ? starts[i] + dim : starts[i];
    begin = s > 0 || dim == 0 ? std::clamp<int64_t>(begin, 0, dim) : std::clamp<int64_t>(begin, 0, dim - 1);
    first[axis] = begin;
    step[axis] = s;
  }
  // Each dim's element count (from the ends) is already in the inferred output shape.

  // Row-major strides of the input in memory, then the slice as a strided copy in memory order.
  const Shape physical = x.physical();
  std::vector<int64_t> strides(rank, 1);
  for (size_t k = rank; k-- > 1;) strides[k - 1] = strides[k] * physical[k];
  StridedCopy copy;
  copy.element = dtype_size(x.dtype);
  std::vector<StridedCopy::Dim> dims;
  int64_t out_stride = 1;
  std::vector<int64_t> out_strides(rank);
  for (size_t k = rank; k-- > 0;) {
    out_strides[k] = out_stride;
    out_stride *= out_shape[x.layout[k]];
  }
  for (size_t k = 0; k < rank; ++k) {
    const int dim = x.layout[k];
    copy.start += first[dim] * strides[k];
    const int64_t size = out_shape[dim];
    const int64_t in_stride = strides[k] * step[dim];
    if (size == 1) continue;
    if (!dims.empty() && dims.back().in_stride == in_stride * size && dims.back().out_stride == out_strides[k] * size) {
      dims.back() = {dims.back().size * size, in_stride, out_strides[k]};
      continue;
    }
    dims.push_back({size, in_stride, out_strides[k]});
  }
  const bool empty = numel(out_shape) == 0;
  // One contiguous block: a view at an offset.
  if (!empty && (dims.empty() || (dims.size() == 1 && dims[0].in_stride == 1))) {
    c.alias(0, x, x.layout, static_cast<size_t>(copy.start) * copy.element);
    return;
  }
  const Value y = c.output(0, x.layout);
  if (empty) return;
  copy.inner = dims.back();
  dims.pop_back();
  if (dims.size() > kMaxDims) unsupported("node '{}': slice over {} interleaved dims not supported", c.node().name, dims.size());
  for (const auto& d : dims) copy.rows *= static_cast<size_t>(d.size);
  copy.outer = std::move(dims);
  c.add_kernel({x, y}, [copy](Pointers p, pthreadpool_t pool) {
    copy.run(static_cast<const std::byte*>(p[0]), static_cast<std::byte*>(p[1]), pool);
  });
}

}  // namespace mt::cpu
