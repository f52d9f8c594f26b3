// The logic family: comparisons (bool results), boolean algebra on bool tensors, is_nan/is_inf,
// and where, as portable loops in the operands' layout (the broadcast loops of binary.cpp's
// integer path). bool is one byte; any non-zero byte reads as true, and results are 0 or 1.
#include <cmath>
#include <cstdint>

#include "kernels/cpu/engines/broadcast_loop.h"
#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/ops/unary_portable.h"
#include "kernels/cpu/plan/op_util.h"

namespace mt::cpu {
namespace {

// An element as compared: bools by truth, not by their byte.
template <typename T, bool kBool>
auto compared(T x) {
  if constexpr (kBool) {
    return x != 0;
  } else {
    return x;
  }
}

struct BroadcastValues {
  std::vector<Value> values;  // the inputs, then the output
  BroadcastOperands operands;
};

// The node's inputs in the layout the output takes, and the output.
BroadcastValues broadcast_values(NodeContext& c) {
  BroadcastValues planned{{}, plan_broadcast_operands(c)};
  for (size_t i = 0; i < c.num_inputs(); ++i)
    planned.values.push_back(c.input(i, trailing_layout(planned.operands.layout, c.input_info(i).shape.size())));
  planned.values.push_back(c.output(0, planned.operands.layout));
  return planned;
}

template <typename T, bool kBool = false>
void plan_compare_as(NodeContext& c, const BroadcastValues& planned) {
  const BroadcastOperands& o = planned.operands;
  const BroadcastLoop loop(o.out_physical, o.physical[0], o.physical[1]);
  auto step = [&](auto fn) {
    c.add_kernel(planned.values, [loop, fn](Pointers p, ThreadPool* pool) {
      loop.run(static_cast<const T*>(p[0]), static_cast<const T*>(p[1]), static_cast<uint8_t*>(p[2]), fn, pool);
    });
  };
  // NaN compares false with everything (IEEE 754), as the reference kernels.
  const std::string& op = c.node().op;
  if (op == "equal") {
    step([](T a, T b) -> uint8_t { return compared<T, kBool>(a) == compared<T, kBool>(b); });
  } else if (op == "less") {
    step([](T a, T b) -> uint8_t { return compared<T, kBool>(a) < compared<T, kBool>(b); });
  } else if (op == "less_or_equal") {
    step([](T a, T b) -> uint8_t { return compared<T, kBool>(a) <= compared<T, kBool>(b); });
  } else if (op == "greater") {
    step([](T a, T b) -> uint8_t { return compared<T, kBool>(a) > compared<T, kBool>(b); });
  } else if (op == "greater_or_equal") {
    step([](T a, T b) -> uint8_t { return compared<T, kBool>(a) >= compared<T, kBool>(b); });
  } else {
    unsupported("node '{}': op {} is not a comparison", c.node().name, op);
  }
}

template <typename T>
void plan_select_as(NodeContext& c, const BroadcastValues& planned) {
  const BroadcastOperands& o = planned.operands;
  const SelectLoop loop(o.out_physical, o.physical[0], o.physical[1], o.physical[2]);
  c.add_kernel(planned.values, [loop](Pointers p, ThreadPool* pool) {
    loop.run(static_cast<const uint8_t*>(p[0]), static_cast<const T*>(p[1]), static_cast<const T*>(p[2]),
             static_cast<T*>(p[3]), pool);
  });
}

}  // namespace

std::optional<std::string> check_compare(const Graph& graph, const Node& node) {
  return check_dtypes(graph, node, {DType::f32, DType::i8, DType::u8, DType::i32, DType::i64, DType::boolean});
}

void plan_compare(NodeContext& c) {
  const BroadcastValues planned = broadcast_values(c);
  switch (c.input_info(0).dtype) {
    case DType::f32: plan_compare_as<float>(c, planned); return;
    case DType::i8: plan_compare_as<int8_t>(c, planned); return;
    case DType::u8: plan_compare_as<uint8_t>(c, planned); return;
    case DType::i32: plan_compare_as<int32_t>(c, planned); return;
    case DType::i64: plan_compare_as<int64_t>(c, planned); return;
    case DType::boolean: plan_compare_as<uint8_t, true>(c, planned); return;
    case DType::f16: break;
  }
  unsupported("node '{}': dtype {} not supported", c.node().name, dtype_name(c.input_info(0).dtype));
}

std::optional<std::string> check_logical(const Graph& graph, const Node& node) {
  return check_dtypes(graph, node, {DType::boolean});
}

void plan_logical(NodeContext& c) {
  const std::string& op = c.node().op;
  if (op == "logical_not") {
    plan_unary_map<uint8_t>(c, [](uint8_t x) -> uint8_t { return x == 0; });
    return;
  }
  const BroadcastValues planned = broadcast_values(c);
  const BroadcastOperands& o = planned.operands;
  const BroadcastLoop loop(o.out_physical, o.physical[0], o.physical[1]);
  auto step = [&](auto fn) {
    c.add_kernel(planned.values, [loop, fn](Pointers p, ThreadPool* pool) {
      loop.run(static_cast<const uint8_t*>(p[0]), static_cast<const uint8_t*>(p[1]), static_cast<uint8_t*>(p[2]), fn,
               pool);
    });
  };
  if (op == "logical_and") {
    step([](uint8_t a, uint8_t b) -> uint8_t { return a != 0 && b != 0; });
  } else if (op == "logical_or") {
    step([](uint8_t a, uint8_t b) -> uint8_t { return a != 0 || b != 0; });
  } else if (op == "logical_xor") {
    step([](uint8_t a, uint8_t b) -> uint8_t { return (a != 0) != (b != 0); });
  } else {
    unsupported("node '{}': op {} is not a boolean op", c.node().name, op);
  }
}

std::optional<std::string> check_classify(const Graph& graph, const Node& node) {
  return check_dtypes(graph, node, {DType::f32, DType::boolean});
}

void plan_classify(NodeContext& c) {
  if (c.node().op == "is_nan") {
    plan_unary_map<float, uint8_t>(c, [](float x) -> uint8_t { return std::isnan(x); });
    return;
  }
  const bool positive = attr_int(c.node(), "detect_positive") != 0;
  const bool negative = attr_int(c.node(), "detect_negative") != 0;
  plan_unary_map<float, uint8_t>(
      c, [positive, negative](float x) -> uint8_t { return std::isinf(x) && (x > 0 ? positive : negative); });
}

// Elements are copied by size, so every dtype works.
std::optional<std::string> check_where(const Graph&, const Node&) { return std::nullopt; }

void plan_where(NodeContext& c) {
  const BroadcastValues planned = broadcast_values(c);
  switch (dtype_size(c.output_info(0).dtype)) {
    case 1: plan_select_as<uint8_t>(c, planned); return;
    case 2: plan_select_as<uint16_t>(c, planned); return;
    case 4: plan_select_as<uint32_t>(c, planned); return;
    case 8: plan_select_as<uint64_t>(c, planned); return;
    default: unsupported("node '{}': dtype {} not supported", c.node().name, dtype_name(c.output_info(0).dtype));
  }
}

}  // namespace mt::cpu
