// argmax, argmin, hardmax, cumsum, top_k and lrn: lib/ops/axis_loops.h's loops (the reference
// kernels' own, so the backends agree exactly) on row-major tensors, the outer rows split across
// threads.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/plan/op_util.h"
#include "kernels/cpu/plan/parallel.h"
#include "lib/ops/axis_loops.h"

namespace mt::cpu {
namespace {

// Input 0 row-major and its view along the node's axis.
struct AxisInput {
  Value x;
  AxisView view;
};

AxisInput axis_input(NodeContext& c) {
  const size_t rank = c.input_info(0).shape.size();
  const Value x = c.input(0, identity_layout(rank));
  return {x, axis_view(x.shape, static_cast<size_t>(axis_of(c.node(), attr_int(c.node(), "axis"), rank)))};
}

// argmax, argmin and top_k read float32 and write int64 indices.
std::optional<std::string> check_float_input(const Graph& graph, const Node& node) {
  const DType dtype = graph.tensor(node.inputs[0]).dtype;
  if (dtype == DType::f32) return std::nullopt;
  return fmt::format("dtype {} not supported", dtype_name(dtype));
}

// Calls fn(first, rows) on chunks of the outer rows of `view` across the pool, about 16k
// elements of work per chunk at least.
template <typename Fn>
void split_rows(ThreadPool* pool, const AxisView& view, const Fn& fn) {
  const size_t min_rows = std::max<size_t>(1, 16384 / static_cast<size_t>(std::max<int64_t>(1, view.n * view.inner)));
  parallel_chunks(pool, static_cast<size_t>(view.outer), min_rows, [&](size_t begin, size_t end) {
    fn(static_cast<int64_t>(begin), static_cast<int64_t>(end - begin));
  });
}

}  // namespace

std::optional<std::string> check_arg_extreme(const Graph& graph, const Node& node) {
  return check_float_input(graph, node);
}

void plan_arg_extreme(NodeContext& c) {
  const AxisInput input = axis_input(c);
  const Value& x = input.x;
  const AxisView view = input.view;
  const Value y = c.output(0, identity_layout(c.output_info(0).shape.size()));
  const bool max = c.node().op == "argmax";
  const bool last = attr_int(c.node(), "select_last_index") != 0;
  c.add_kernel({x, y}, [view, max, last](Pointers p, ThreadPool* pool) {
    const auto* in = static_cast<const float*>(p[0]);
    auto* out = static_cast<int64_t*>(p[1]);
    split_rows(pool, view, [&](int64_t first, int64_t rows) {
      arg_extreme(in + view.offset(first), out + first * view.inner, view, rows, max, last);
    });
  });
}

std::optional<std::string> check_hardmax(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_hardmax(NodeContext& c) {
  const AxisInput input = axis_input(c);
  const Value& x = input.x;
  const AxisView view = input.view;
  const Value y = c.output(0, x.layout);
  c.add_kernel({x, y}, [view](Pointers p, ThreadPool* pool) {
    const auto* in = static_cast<const float*>(p[0]);
    auto* out = static_cast<float*>(p[1]);
    split_rows(pool, view, [&](int64_t first, int64_t rows) {
      hardmax(in + view.offset(first), out + view.offset(first), view, rows);
    });
  });
}

std::optional<std::string> check_cumsum(const Graph& graph, const Node& node) {
  return check_dtypes(graph, node, {DType::f32, DType::i32, DType::i64});
}

void plan_cumsum(NodeContext& c) {
  const AxisInput input = axis_input(c);
  const Value& x = input.x;
  const AxisView view = input.view;
  const Value y = c.output(0, x.layout);
  const bool exclusive = attr_int(c.node(), "exclusive") != 0;
  const bool reverse = attr_int(c.node(), "reverse") != 0;
  auto planned = [&](auto type_tag) {
    using T = decltype(type_tag);
    c.add_kernel({x, y}, [view, exclusive, reverse](Pointers p, ThreadPool* pool) {
      const auto* in = static_cast<const T*>(p[0]);
      auto* out = static_cast<T*>(p[1]);
      split_rows(pool, view, [&](int64_t first, int64_t rows) {
        cumsum(in + view.offset(first), out + view.offset(first), view, rows, exclusive, reverse);
      });
    });
  };
  switch (x.dtype) {
    case DType::i32: planned(int32_t{}); break;
    case DType::i64: planned(int64_t{}); break;
    default: planned(float{}); break;
  }
}

std::optional<std::string> check_top_k(const Graph& graph, const Node& node) { return check_float_input(graph, node); }

void plan_top_k(NodeContext& c) {
  const AxisInput input = axis_input(c);
  const Value& x = input.x;
  const AxisView view = input.view;
  const Value values = c.output(0, x.layout);
  const Value indices = c.output(1, x.layout);
  const int64_t k = attr_int(c.node(), "k");
  const bool largest = attr_int(c.node(), "largest") != 0;
  c.add_kernel({x, values, indices}, [view, k, largest](Pointers p, ThreadPool* pool) {
    const auto* in = static_cast<const float*>(p[0]);
    auto* out = static_cast<float*>(p[1]);
    auto* index = static_cast<int64_t*>(p[2]);
    split_rows(pool, view, [&](int64_t first, int64_t rows) {
      const int64_t offset = first * k * view.inner;
      top_k(in + view.offset(first), out + offset, index + offset, view, rows, k, largest);
    });
  });
}

std::optional<std::string> check_lrn(const Graph& graph, const Node& node) { return check_float(graph, node); }

void plan_lrn(NodeContext& c) {
  const Value x = c.input(0, identity_layout(c.input_info(0).shape.size()));
  const AxisView view = axis_view(x.shape, 1);
  const Value y = c.output(0, x.layout);
  const Node& node = c.node();
  const LrnParams params{attr_int(node, "size"), attr_float(node, "alpha"), attr_float(node, "beta"),
                         attr_float(node, "bias")};
  c.add_kernel({x, y}, [view, params](Pointers p, ThreadPool* pool) {
    const auto* in = static_cast<const float*>(p[0]);
    auto* out = static_cast<float*>(p[1]);
    split_rows(pool, view, [&](int64_t first, int64_t rows) {
      lrn(in + view.offset(first), out + view.offset(first), view, rows, params);
    });
  });
}

}  // namespace mt::cpu
