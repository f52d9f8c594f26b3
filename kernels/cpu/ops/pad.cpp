// pad in the input's layout: constant padding of 4-byte elements is XNNPACK's constant_pad_nd;
// reflect, edge and cropping (negative pads) use per-dim index maps, each output row one
// lookup per element.
#include <cstring>

#include <fmt/format.h>

#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/parallel.h"

namespace mt::cpu {
namespace {

// For each output index along one dim: the input index it copies, or -1 for the padding value.
std::vector<int64_t> index_map(int64_t size, int64_t begin, int64_t end, const std::string& mode) {
  std::vector<int64_t> map(static_cast<size_t>(size + begin + end));
  for (int64_t o = 0; o < static_cast<int64_t>(map.size()); ++o) {
    int64_t i = o - begin;
    if (i < 0 || i >= size) {
      if (mode == "edge") {
        i = std::clamp<int64_t>(i, 0, size - 1);
      } else if (mode == "reflect") {
        const int64_t period = 2 * (size - 1);
        i = period == 0 ? 0 : ((i % period) + period) % period;
        if (i >= size) i = period - i;
      } else {
        i = -1;
      }
    }
    map[static_cast<size_t>(o)] = i;
  }
  return map;
}

template <typename T>
struct MappedCopy {
  std::vector<std::vector<int64_t>> maps;  // per physical dim
  std::vector<int64_t> in_strides;
  T value{};

  void run(const T* in, T* out, ThreadPool* pool) const {
    const size_t rank = maps.size();
    const auto& inner = maps.back();
    const size_t width = inner.size();
    size_t rows = 1;
    for (size_t k = 0; k + 1 < rank; ++k) rows *= maps[k].size();
    parallel_chunks(pool, rows, std::max<size_t>(1, 8192 / std::max<size_t>(1, width)), [&](size_t begin, size_t end) {
      for (size_t row = begin; row < end; ++row) {
        T* destination = out + row * width;
        size_t rest = row;
        int64_t offset = 0;
        bool padding = false;
        for (size_t k = rank - 1; k-- > 0;) {
          const int64_t i = maps[k][rest % maps[k].size()];
          rest /= maps[k].size();
          padding = padding || i < 0;
          offset += i * in_strides[k];
        }
        if (padding) {
          for (size_t o = 0; o < width; ++o) destination[o] = value;
          continue;
        }
        const T* source = in + offset;
        for (size_t o = 0; o < width; ++o) destination[o] = inner[o] < 0 ? value : source[inner[o]];
      }
    });
  }
};

template <typename T>
void add_mapped(NodeContext& c, const Value& x, const Value& y, const std::vector<int64_t>& begin,
                const std::vector<int64_t>& end, const std::string& mode, T value) {
  const Shape physical = x.physical();
  MappedCopy<T> copy;
  copy.value = value;
  copy.in_strides.assign(physical.size(), 1);
  for (size_t k = physical.size(); k-- > 1;) copy.in_strides[k - 1] = copy.in_strides[k] * physical[k];
  for (size_t k = 0; k < physical.size(); ++k) copy.maps.push_back(index_map(physical[k], begin[k], end[k], mode));
  if (physical.empty()) copy.maps.push_back({0});  // a scalar: one element, copied
  c.add_kernel({x, y}, [copy](Pointers p, ThreadPool* pool) {
    copy.run(static_cast<const T*>(p[0]), static_cast<T*>(p[1]), pool);
  });
}

}  // namespace

std::optional<std::string> check_pad(const Graph& graph, const Node& node) {
  if (auto reason = check_dtypes(graph, node, {DType::f32, DType::i32, DType::i64})) return reason;
  const std::string& mode = attr_string(node, "mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return fmt::format("mode \"{}\" not supported", mode);
  const Shape& shape = graph.tensor(node.inputs[0]).shape;
  const auto& pads = attr_ints(node, "pads");
  if (pads.size() != 2 * shape.size()) return std::string("pads must have 2 values per dim");
  if (mode != "constant")
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 0 && (pads[d] > 0 || pads[d + shape.size()] > 0))
        return fmt::format("{} padding of an empty dim not supported", mode);
  return std::nullopt;
}

void plan_pad(NodeContext& c) {
  const Value x0 = c.input(0);
  const size_t rank = x0.shape.size();
  const auto& pads = attr_ints(c.node(), "pads");
  const std::string& mode = attr_string(c.node(), "mode");
  const float value = attr_f32(c.node(), "value");
  std::vector<int64_t> begin(rank), end(rank);
  bool negative = false;
  for (size_t k = 0; k < rank; ++k) {
    begin[k] = pads[x0.layout[k]];
    end[k] = pads[x0.layout[k] + rank];
    negative = negative || begin[k] < 0 || end[k] < 0;
  }

  if (mode == "constant" && !negative && x0.dtype == DType::f32 && rank >= 1 && rank <= XNN_MAX_TENSOR_DIMS) {
    xnn_operator_t op = c.create_xnn("xnn_create_constant_pad_nd_x32", xnn_create_constant_pad_nd_x32, &value, 0);
    const Value x = c.xnn_input(0, x0.layout);
    const Value y = c.output(0, x0.layout);
    std::array<size_t, XNN_MAX_TENSOR_DIMS> shape{}, before{}, after{};
    const Shape physical = x0.physical();
    for (size_t k = 0; k < rank; ++k) {
      shape[k] = static_cast<size_t>(physical[k]);
      before[k] = static_cast<size_t>(begin[k]);
      after[k] = static_cast<size_t>(end[k]);
    }
    c.add_xnn(op, {x, y}, [rank, shape, before, after](xnn_operator_t o, Pointers p, pthreadpool_t pool) {
      return xnn_setup_constant_pad_nd_x32(o, rank, shape.data(), before.data(), after.data(), p[0], p[1], pool);
    });
    return;
  }
  const Value y = c.output(0, x0.layout);
  switch (x0.dtype) {
    case DType::f32: add_mapped<float>(c, x0, y, begin, end, mode, value); break;
    case DType::i32: add_mapped<int32_t>(c, x0, y, begin, end, mode, static_cast<int32_t>(value)); break;
    default: add_mapped<int64_t>(c, x0, y, begin, end, mode, static_cast<int64_t>(value)); break;
  }
}

}  // namespace mt::cpu
