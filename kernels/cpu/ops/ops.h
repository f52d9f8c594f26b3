// Check and plan functions of every op the cpu backend runs, one pair per op (or family), defined
// in the op's own file and listed in kernel_table.cpp.
#pragma once

#include <cstddef>
#include <functional>

#include "kernels/cpu/engines/channel_shuffle.h"
#include "kernels/cpu/plan/parallel.h"
#include "kernels/cpu/plan/kernel_table.h"

namespace mt::cpu {

#define MT_CPU_OP(name)                                                    \
  std::optional<std::string> check_##name(const Graph& graph, const Node& node); \
  void plan_##name(NodeContext& context);

// unary_xnn.cpp: XNNPACK elementwise operators
MT_CPU_OP(relu)
MT_CPU_OP(clamp)
MT_CPU_OP(sigmoid)
MT_CPU_OP(hardswish)
MT_CPU_OP(leaky_relu)
MT_CPU_OP(elu)
MT_CPU_OP(sqrt)
MT_CPU_OP(neg)
MT_CPU_OP(abs)
MT_CPU_OP(floor)
MT_CPU_OP(ceil)
MT_CPU_OP(prelu)
// unary_portable.cpp: the rest of the activation family
MT_CPU_OP(tanh)
MT_CPU_OP(silu)
MT_CPU_OP(erf)
MT_CPU_OP(exp)
MT_CPU_OP(log)
MT_CPU_OP(reciprocal)
MT_CPU_OP(softplus)
MT_CPU_OP(gelu)
MT_CPU_OP(hardsigmoid)
MT_CPU_OP(unary_math)
// cast.cpp
MT_CPU_OP(cast)
// binary.cpp: add sub mul div max min pow mod bit_shift
MT_CPU_OP(binary)
// logic.cpp: comparisons, boolean ops, is_nan/is_inf, where
MT_CPU_OP(compare)
MT_CPU_OP(logical)
MT_CPU_OP(classify)
MT_CPU_OP(where)
// reduce.cpp: every reduce_* op
MT_CPU_OP(reduce)
// softmax.cpp: softmax, log_softmax
MT_CPU_OP(softmax)
// norm.cpp
MT_CPU_OP(batch_norm)
MT_CPU_OP(layer_norm)
// linear.cpp
MT_CPU_OP(linear)
MT_CPU_OP(matmul)
// conv.cpp
MT_CPU_OP(conv2d)
MT_CPU_OP(conv_transpose2d)
// pool.cpp
MT_CPU_OP(max_pool2d)
MT_CPU_OP(max_pool2d_indices)
MT_CPU_OP(avg_pool2d)
MT_CPU_OP(global_pool)
// resize.cpp, pad.cpp
MT_CPU_OP(resize)
MT_CPU_OP(pad)
// views.cpp: ops that only relabel bytes
MT_CPU_OP(reshape)
MT_CPU_OP(transpose)
// concat.cpp, slice.cpp, gather.cpp, expand.cpp
MT_CPU_OP(concat)
MT_CPU_OP(split)
MT_CPU_OP(slice)
MT_CPU_OP(gather)
MT_CPU_OP(expand)
// axis_ops.cpp: argmax and argmin (arg_extreme), hardmax, cumsum, top_k, lrn
MT_CPU_OP(arg_extreme)
MT_CPU_OP(hardmax)
MT_CPU_OP(cumsum)
MT_CPU_OP(top_k)
MT_CPU_OP(lrn)
// index.cpp: the index family
MT_CPU_OP(trilu)
MT_CPU_OP(tile)
MT_CPU_OP(gather_elements)
MT_CPU_OP(gather_nd)
MT_CPU_OP(scatter_elements)
MT_CPU_OP(scatter_nd)
MT_CPU_OP(one_hot)
MT_CPU_OP(non_max_suppression)
// sample.cpp: the sample family
MT_CPU_OP(grid_sample)
MT_CPU_OP(roi_align)
MT_CPU_OP(max_unpool)
// signal.cpp: the signal family, and det
MT_CPU_OP(dft)
MT_CPU_OP(reverse_sequence)
MT_CPU_OP(det)
// quant.cpp
MT_CPU_OP(quantize)
MT_CPU_OP(dequantize)
// recurrent.cpp: rnn, gru, lstm
MT_CPU_OP(recurrent)

#undef MT_CPU_OP

// binary.cpp, shared with the int8 binaries: the output takes the layout of an operand with the
// output's full shape, computed tensors first (constants are reordered at planning, for free).
Layout binary_output_layout(NodeContext& context);

// binary.cpp, shared with logic.cpp: where a broadcast op's operands meet. Input i is read in
// trailing_layout(layout, its rank), which gives it the shape physical[i] (its shape padded to
// the output's rank, in the layout's order); the output is stored in `layout` (out_physical).
struct BroadcastOperands {
  Layout layout;
  Shape out_physical;
  std::vector<Shape> physical;
};
BroadcastOperands plan_broadcast_operands(NodeContext& context);

// concat.cpp, shared with the int8 concat: concat whose blocks (a run of one input's bytes in the
// output) are copied by copy(input index, destination, source, bytes); an empty copy is memcpy.
using ConcatCopy = std::function<void(size_t, std::byte*, const std::byte*, size_t)>;
void plan_concat_blocks(NodeContext& context, const ConcatCopy& copy);
// channel_shuffle.cpp: plans a channel concat with the channel shuffle after it (and the channel
// slices after that) as one step, if the graph has that pattern; false (nothing planned) otherwise.
bool plan_concat_shuffle(NodeContext& context);
// The same pattern at concat node `concat`, fused into the step `planning` plans (the concat's own,
// or that of the node computing its last input, which then runs the pass on each range of pixels it
// has computed): the pass, and its pointers' values (the concat's inputs, then its outputs). Nullopt,
// with nothing fused, where the pattern does not hold, an input is not computed yet, or conv
// fusion is off.
struct ConcatShuffle {
  ChannelShuffle shuffle;
  std::vector<Value> values;
};
std::optional<ConcatShuffle> fuse_concat_shuffle(NodeContext& planning, size_t concat);
// A conv step that computes the last input of such a concat runs the pass as its tail: the pass, if
// fuse_shuffle_after fused one, and where its values start among the step's pointers.
struct ShuffleTail {
  const ChannelShuffle* pass = nullptr;
  Pointers pointers;  // the step's, from the pass's values on
};
struct FusedShuffle {
  std::optional<ChannelShuffle> pass;
  size_t first = 0;
  ShuffleTail at(Pointers step) const { return {pass ? &*pass : nullptr, pass ? step.subspan(first) : Pointers{}}; }
};
// fuse_concat_shuffle at the sole reader of `tensor` (computed by `planning`'s step), with the pass's
// values appended to `values`; no pass where the pattern does not hold.
FusedShuffle fuse_shuffle_after(NodeContext& planning, const std::string& tensor, std::vector<Value>& values);
// The pass over the pixel ranges of a step (`tail` outlives the call it is given to).
PixelRangeTail shuffle_tail(const ShuffleTail& tail);

// pool.cpp, shared with the int8 max pool: a max_pool2d node's window as engines/max_pool.h
// takes it (the output size from the node: ceil_mode windows reach past the image).
struct PackedConvShape;
PackedConvShape max_pool_shape(const NodeContext& context);

// reduce.cpp, shared with the global pools: reduces logical `axes` of input 0 into output 0.
enum class ReduceKind;
void plan_reduction(NodeContext& context, const std::vector<int>& axes, bool keepdims, ReduceKind kind);

}  // namespace mt::cpu
