// Op schemas of the reduce family: reductions over a set of axes, softmax and log_softmax
// along one axis.
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
}

}  // namespace mt
