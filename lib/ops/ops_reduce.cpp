// Op schemas of the reduce family: reductions over a set of axes; softmax, log_softmax, hardmax,
// argmax/argmin, top_k and cumsum along one axis.
#include <vector>

#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

std::vector<TensorType> infer_reduce(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  const size_t rank = x.shape.size();
  const bool keepdims = checked_flag(context, "keepdims");
  const std::vector<int64_t>& axes = context.attr_ints("axes");
  // Empty axes reduce over every axis.
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t axis : axes) {
    const int a = checked_axis(context, "axes", axis, rank);
    if (reduced[a]) context.fail("attribute 'axes' names axis {} twice", a);
    reduced[a] = true;
  }
  Shape shape;
  for (size_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      shape.push_back(x.shape[d]);
    else if (keepdims)
      shape.push_back(1);
  }
  return {TensorType{x.dtype, shape}};
}

std::vector<TensorType> infer_softmax(const InferContext& context) {
  require_rank(context, 0, 1);
  checked_axis(context, "axis", context.attr_int("axis"), context.input(0).shape.size());
  return same_as_input0(context);
}

// argmax / argmin: int64 indices along 'axis', which is kept as size 1 or dropped.
std::vector<TensorType> infer_arg_extreme(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  require_rank(context, 0, 1);
  const int axis = checked_axis(context, "axis", context.attr_int("axis"), x.shape.size());
  const bool keepdims = checked_flag(context, "keepdims");
  checked_flag(context, "select_last_index");
  if (x.shape[static_cast<size_t>(axis)] == 0) context.fail("axis {} is empty: no element to select", axis);
  Shape shape;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    if (d != static_cast<size_t>(axis)) shape.push_back(x.shape[d]);
    else if (keepdims) shape.push_back(1);
  }
  return {TensorType{DType::i64, shape}};
}

std::vector<TensorType> infer_cumsum(const InferContext& context) {
  require_rank(context, 0, 1);
  checked_axis(context, "axis", context.attr_int("axis"), context.input(0).shape.size());
  checked_flag(context, "exclusive");
  checked_flag(context, "reverse");
  return same_as_input0(context);
}

// top_k: values and int64 indices with the axis cut to k.
std::vector<TensorType> infer_top_k(const InferContext& context) {
  const TensorInfo& x = context.input(0);
  require_rank(context, 0, 1);
  const int axis = checked_axis(context, "axis", context.attr_int("axis"), x.shape.size());
  checked_flag(context, "largest");
  checked_flag(context, "sorted");
  const int64_t k = context.attr_int("k");
  if (k < 0 || k > x.shape[static_cast<size_t>(axis)])
    context.fail("attribute 'k' = {} is not in [0, {}] (the size of axis {})", k, x.shape[static_cast<size_t>(axis)],
                 axis);
  Shape shape = x.shape;
  shape[static_cast<size_t>(axis)] = k;
  return {TensorType{x.dtype, shape}, TensorType{DType::i64, shape}};
}

OpSchema arg_extreme(std::string name, std::string summary) {
  return OpSchema{std::move(name),
                  std::move(summary),
                  {"X"},
                  false,
                  1,
                  {{"axis", AttrType::integer, Attribute{int64_t{0}}},
                   {"keepdims", AttrType::integer, Attribute{int64_t{1}}},
                   {"select_last_index", AttrType::integer, Attribute{int64_t{0}}}},
                  infer_arg_extreme};
}

OpSchema reduce(std::string name, std::string summary) {
  return OpSchema{std::move(name),
                  std::move(summary),
                  {"X"},
                  false,
                  1,
                  {{"axes", AttrType::integers, Attribute{std::vector<int64_t>{}}},
                   {"keepdims", AttrType::integer, Attribute{int64_t{1}}}},
                  infer_reduce};
}

OpSchema softmax(std::string name, std::string summary) {
  return OpSchema{std::move(name), std::move(summary), {"X"}, false, 1,
                  {{"axis", AttrType::integer, Attribute{int64_t{-1}}}}, infer_softmax};
}

}  // namespace

void register_reduce_ops(OpRegistry& registry) {
  registry.add(reduce("reduce_mean", "mean over 'axes' (empty: all axes)"));
  registry.add(reduce("reduce_sum", "sum over 'axes' (empty: all axes)"));
  registry.add(reduce("reduce_max", "maximum over 'axes' (empty: all axes)"));
  registry.add(reduce("reduce_min", "minimum over 'axes' (empty: all axes)"));
  registry.add(softmax("softmax", "exp(x) / sum(exp(x)) along 'axis'"));
  registry.add(softmax("log_softmax", "log(softmax(x)) along 'axis'"));
  registry.add(reduce("reduce_l1", "sum of |x| over 'axes' (empty: all axes)"));
  registry.add(reduce("reduce_l2", "sqrt of the sum of x^2 over 'axes' (empty: all axes)"));
  registry.add(reduce("reduce_sum_square", "sum of x^2 over 'axes' (empty: all axes)"));
  registry.add(reduce("reduce_prod", "product over 'axes' (empty: all axes)"));
  registry.add(reduce("reduce_log_sum", "log of the sum over 'axes' (empty: all axes)"));
  registry.add(
      reduce("reduce_log_sum_exp", "log(sum(exp(x))) over 'axes' (empty: all axes), computed without overflow"));
  registry.add(softmax("hardmax", "1 at the first maximum along 'axis', 0 elsewhere"));
  registry.add(
      arg_extreme("argmax", "int64 index of the maximum along 'axis' (ties: first, or last with select_last_index)"));
  registry.add(
      arg_extreme("argmin", "int64 index of the minimum along 'axis' (ties: first, or last with select_last_index)"));
  registry.add(OpSchema{"top_k",
                        "the k largest ('largest' = 0: smallest) elements along 'axis', sorted, and their int64 "
                        "indices (ties: lower index first); 'sorted' = 0 gives them sorted too",
                        {"X"},
                        false,
                        2,
                        {{"k", AttrType::integer, std::nullopt},
                         {"axis", AttrType::integer, Attribute{int64_t{-1}}},
                         {"largest", AttrType::integer, Attribute{int64_t{1}}},
                         {"sorted", AttrType::integer, Attribute{int64_t{1}}}},
                        infer_top_k});
  registry.add(OpSchema{"cumsum",
                        "running sum along 'axis' ('exclusive': without the element itself, 'reverse': from the end)",
                        {"X"},
                        false,
                        1,
                        {{"axis", AttrType::integer, std::nullopt},
                         {"exclusive", AttrType::integer, Attribute{int64_t{0}}},
                         {"reverse", AttrType::integer, Attribute{int64_t{0}}}},
                        infer_cumsum});
}

}  // namespace mt
