// Op schemas of the signal family: dft and reverse_sequence, which work along a time (or signal)
// axis. Their loops are lib/ops/signal_loops.h.
#include "lib/ops/infer_helpers.h"
#include "lib/ops/registry.h"

namespace mt {
namespace {

std::vector<TensorType> infer_dft(const InferContext& context) {
  require_rank(context, 0, 2);
  const TensorInfo& x = context.input(0);
  if (x.dtype != DType::f32) context.fail("input 'X' must be float32, not {}", dtype_name(x.dtype));
  if (x.shape.back() != 1 && x.shape.back() != 2)
    context.fail("the last dim of X {} must be 1 (real) or 2 (complex)", shape_str(x.shape));
  // The signal axis is any but the last (the real/imaginary one).
  const int axis = checked_axis(context, "axis", context.attr_int("axis"), x.shape.size() - 1);
  const bool onesided = checked_flag(context, "onesided");
  const bool inverse = checked_flag(context, "inverse");
  if (onesided && (inverse || x.shape.back() == 2))
    context.fail("onesided applies to a forward transform of a real signal");
  int64_t length = context.attr_int("length");
  if (length == 0) length = x.shape[static_cast<size_t>(axis)];
  if (length < 1 || length > (int64_t{1} << 24)) context.fail("the transform's length {} must be in [1, 2^24]", length);
  Shape out = x.shape;
  out[static_cast<size_t>(axis)] = onesided ? length / 2 + 1 : length;
  out.back() = 2;
  if (!checked_numel(out)) context.fail("the output shape {} is too large", shape_str(out));
  return {{DType::f32, out}};
}

std::vector<TensorType> infer_reverse_sequence(const InferContext& context) {
  require_rank(context, 0, 2);
  const TensorInfo& x = context.input(0);
  const TensorInfo& lengths = context.input(1);
  const int64_t batch_axis = context.attr_int("batch_axis"), time_axis = context.attr_int("time_axis");
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    context.fail("batch_axis {} and time_axis {} must be 0 and 1 in some order", batch_axis, time_axis);
  if (lengths.dtype != DType::i64 && lengths.dtype != DType::i32)
    context.fail("input 'sequence_lens' must be int64 or int32, not {}", dtype_name(lengths.dtype));
  if (lengths.shape != Shape{x.shape[static_cast<size_t>(batch_axis)]})
    context.fail("sequence_lens {} must be [{}], one per sequence", shape_str(lengths.shape),
                 x.shape[static_cast<size_t>(batch_axis)]);
  return same_as_input0(context);
}

}  // namespace

void register_signal_ops(OpRegistry& registry) {
  registry.add(OpSchema{"dft",
                        "discrete Fourier transform of X [..., N, ..., 1 or 2] (real, or complex as (re, im)) along "
                        "'axis', over 'length' points (0: N; zero-padded or truncated); 'inverse', 'onesided'",
                        {"X"},
                        false,
                        1,
                        {{"axis", AttrType::integer, Attribute{int64_t{1}}},
                         {"length", AttrType::integer, Attribute{int64_t{0}}},
                         {"inverse", AttrType::integer, Attribute{int64_t{0}}},
                         {"onesided", AttrType::integer, Attribute{int64_t{0}}}},
                        infer_dft});
  registry.add(OpSchema{"reverse_sequence",
                        "reverses the first sequence_lens[b] steps of each sequence b along 'time_axis'",
                        {"X", "sequence_lens"},
                        false,
                        1,
                        {{"batch_axis", AttrType::integer, Attribute{int64_t{1}}},
                         {"time_axis", AttrType::integer, Attribute{int64_t{0}}}},
                        infer_reverse_sequence});
}

}  // namespace mt
