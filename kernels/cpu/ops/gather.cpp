// gather along any axis of data in its own layout: [outer, axis, inner] in memory becomes
// [outer, indices..., inner], each index one memcpy of the inner block. Constant indices are
// checked at planning; computed ones on every run.
#include <cstring>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/core/error.h"

namespace mt::cpu {
namespace {

template <typename Index>
void gather(const std::byte* data, const Index* indices, std::byte* out, size_t outer, size_t count, int64_t axis_size,
            size_t inner_bytes, const std::string& node, ThreadPool* pool) {
  for (size_t j = 0; j < count; ++j) {
    const int64_t index = static_cast<int64_t>(indices[j]);
    if (index < -axis_size || index >= axis_size)
      invalid_input("node '{}' (gather): index {} out of range for axis of size {}", node, index, axis_size);
  }
  parallel_chunks(pool, outer, std::max<size_t>(1, 16384 / std::max<size_t>(1, count * inner_bytes)),
                  [&](size_t begin, size_t end) {
                    for (size_t o = begin; o < end; ++o) {
                      const std::byte* block = data + o * static_cast<size_t>(axis_size) * inner_bytes;
                      std::byte* destination = out + o * count * inner_bytes;
                      for (size_t j = 0; j < count; ++j) {
                        int64_t index = static_cast<int64_t>(indices[j]);
                        if (index < 0) index += axis_size;
                        std::memcpy(destination + j * inner_bytes, block + static_cast<size_t>(index) * inner_bytes,
                                    inner_bytes);
                      }
                    }
                  });
}

}  // namespace

std::optional<std::string> check_gather(const Graph& graph, const Node& node) {
  const DType index = graph.tensor(node.inputs[1]).dtype;
  if (index != DType::i64 && index != DType::i32) return fmt::format("indices dtype {} not supported", dtype_name(index));
  return std::nullopt;
}

void plan_gather(NodeContext& c) {
  const Value data = c.input(0);
  const TensorInfo& indices_info = c.input_info(1);
  const size_t rank = data.shape.size();
  const int axis = axis_of(c.node(), attr_int(c.node(), "axis"), rank);
  const auto index_rank = static_cast<int>(indices_info.shape.size());

  // Output layout: the data's memory order with the axis replaced by the index dims.
  Layout out_layout;
  for (int dim : data.layout) {
    if (dim < axis) out_layout.push_back(dim);
    else if (dim > axis) out_layout.push_back(dim + index_rank - 1);
    else
      for (int j = 0; j < index_rank; ++j) out_layout.push_back(axis + j);
  }
  const int physical = physical_axis(data.layout, axis);
  const Shape shape = data.physical();
  size_t outer = 1, inner = dtype_size(data.dtype);
  for (int k = 0; k < static_cast<int>(rank); ++k) {
    if (k < physical) outer *= static_cast<size_t>(shape[k]);
    if (k > physical) inner *= static_cast<size_t>(shape[k]);
  }
  const int64_t axis_size = data.shape[axis];
  const size_t count = static_cast<size_t>(numel(indices_info.shape));
  if (c.is_constant(1)) {
    for (size_t j = 0; j < count; ++j) {
      const int64_t index = indices_info.dtype == DType::i64 ? c.constant(1).as<int64_t>()[j]
                                                              : c.constant(1).as<int32_t>()[j];
      if (index < -axis_size || index >= axis_size)
        invalid_input("node '{}' (gather): index {} out of range for axis of size {}", c.node().name, index, axis_size);
    }
  }
  const Value indices = c.input(1, identity_layout(indices_info.shape.size()));
  const Value y = c.output(0, out_layout);
  const bool wide = indices_info.dtype == DType::i64;
  const std::string name = c.node().name;
  c.add_kernel({data, indices, y}, [=](Pointers p, ThreadPool* pool) {
    const auto* source = static_cast<const std::byte*>(p[0]);
    auto* out = static_cast<std::byte*>(p[2]);
    if (wide) gather(source, static_cast<const int64_t*>(p[1]), out, outer, count, axis_size, inner, name, pool);
    else gather(source, static_cast<const int32_t*>(p[1]), out, outer, count, axis_size, inner, name, pool);
  });
}

}  // namespace mt::cpu
