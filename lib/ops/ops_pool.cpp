// Op schemas of the pool family: windowed max/average pooling on NCHW tensors (ceil_mode,
// dilation for max, count_include_pad for average) and global pooling over all spatial axes.
#include "lib/ops/conv_geometry.h"
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

using Ints = std::vector<int64_t>;

int64_t output_length(const InferContext& context, const Window2d& window, int axis, int64_t in) {
  const int64_t length = *window_output_length(window, axis, in);  // cannot overflow: all terms <= 2^40
  const char* name = axis == 0 ? "height" : "width";
  if (length < 1)
    context.fail("output {} would be 0: input {} {}, window extent {}, pads {}+{}", name, name, in, window.extent(axis),
                 window.pad_begin[axis], window.pad_end[axis]);
  return length;
}

std::vector<TensorType> infer_pool2d(const InferContext& context) {
  require_rank(context, 0, 4, 4);
  if (context.node().op == "avg_pool2d") checked_flag(context, "count_include_pad");
  Window2d window;
  try {
    window = pool_window(context.node());
  } catch (const Error& error) {
    context.fail_message(error.what());
  }
  const TensorInfo& x = context.input(0);
  return {{x.dtype,
           {x.shape[0], x.shape[1], output_length(context, window, 0, x.shape[2]),
            output_length(context, window, 1, x.shape[3])}}};
}

// Where max_pool2d's maxima are: its output shape, int64.
std::vector<TensorType> infer_max_pool2d_indices(const InferContext& context) {
  TensorType out = infer_pool2d(context)[0];
  if (out.dtype != DType::f32) context.fail("input must be float32, not {}", dtype_name(out.dtype));
  checked_flag(context, "storage_order");
  out.dtype = DType::i64;
  return {out};
}

std::vector<TensorType> infer_global_pool(const InferContext& context) {
  require_rank(context, 0, 3);
  const TensorInfo& x = context.input(0);
  Shape out = x.shape;
  for (size_t i = 2; i < out.size(); ++i) {
    if (x.shape[i] < 1)
      context.fail("input '{}' {} has an empty spatial axis", context.node().inputs[0], shape_str(x.shape));
    out[i] = 1;
  }
  return {{x.dtype, out}};
}

std::vector<AttrSpec> window_attrs() {
  return {{"kernel_shape", AttrType::integers, std::nullopt},
          {"strides", AttrType::integers, Attribute{Ints{1, 1}}},
          {"pads", AttrType::integers, Attribute{Ints{0, 0, 0, 0}}},
          {"ceil_mode", AttrType::integer, Attribute{int64_t{0}}}};
}

}  // namespace

void register_pool_ops(OpRegistry& registry) {
  std::vector<AttrSpec> max_attrs = window_attrs();
  max_attrs.push_back({"dilations", AttrType::integers, Attribute{Ints{1, 1}}});
  std::vector<AttrSpec> indices_attrs = max_attrs;
  indices_attrs.push_back({"storage_order", AttrType::integer, Attribute{int64_t{0}}});
  registry.add({"max_pool2d_indices",
                "Where max_pool2d's maxima are: indices into X[N,C,H,W] flattened, planes row-major "
                "(storage_order 0) or column-major (1) (ONNX MaxPool's Indices)",
                {"X"},
                false,
                1,
                std::move(indices_attrs),
                infer_max_pool2d_indices});
  registry.add({"max_pool2d",
                "Maximum over each window of X[N,C,H,W] (padding counts as -inf)",
                {"X"},
                false,
                1,
                std::move(max_attrs),
                infer_pool2d});
  std::vector<AttrSpec> avg_attrs = window_attrs();
  avg_attrs.push_back({"count_include_pad", AttrType::integer, Attribute{int64_t{0}}});
  registry.add({"avg_pool2d",
                "Mean over each window of X[N,C,H,W] (padding counted only with count_include_pad)",
                {"X"},
                false,
                1,
                std::move(avg_attrs),
                infer_pool2d});
  registry.add({"global_avg_pool",
                "Mean over all spatial axes: X[N,C,...] -> [N,C,1,...,1]",
                {"X"},
                false,
                1,
                {},
                infer_global_pool});
  registry.add({"global_max_pool",
                "Maximum over all spatial axes: X[N,C,...] -> [N,C,1,...,1]",
                {"X"},
                false,
                1,
                {},
                infer_global_pool});
}

}  // namespace mt
