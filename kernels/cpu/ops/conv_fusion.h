// Plan-time fusion of the nodes after a float32 conv into the output stage of our own conv engines
// (engines/epilogue.h): a hardswish or silu node that alone reads the conv's output, then an add
// that alone reads that result and adds a tensor of the same shape computed earlier (a residual
// connection, with the add's fused clamp). The fused nodes plan no step of their own (profiles
// show them with no time; their time is the conv's). Fusion accepts exactly what the nodes would
// run apart on cpu (each passes its own check), so a model plans alike with PlanOptions::conv_fusion
// off (MT_CPU_CONV_FUSION=0), which plans every node on its own. Before a pointwise conv, a mul by
// a per-channel scale (squeeze-excitation) is folded into the conv's weights (folds_channel_gate).
#pragma once

#include <optional>
#include <string>

#include "kernels/cpu/engines/epilogue.h"
#include "kernels/cpu/plan/plan_builder.h"

namespace mt::cpu {

// What follows the conv of `c` that its output stage will run: the epilogue's fields except the
// clamp (the conv's own) and the residual pointer (known at run time).
struct ConvFusion {
  std::optional<size_t> activation_node;  // hardswish or silu
  Activation activation = Activation::none;
  std::optional<size_t> add_node;
  std::string residual;  // the add's other operand
  float residual_low = 0, residual_high = 0;
};

// The nodes the conv of `c` can absorb (none when PlanOptions::conv_fusion is off).
ConvFusion conv_fusion(const NodeContext& c);

// The conv's output in NHWC: the last fused node's output (marking the fused nodes planned), or
// the conv's own; and the residual in NHWC when an add is fused.
struct FusedValues {
  Value y;
  std::optional<Value> residual;
};
FusedValues fused_values(NodeContext& c, const ConvFusion& fusion);

// The epilogue of a conv with clamp [low, high] and `fusion` (its residual pointer still null).
Epilogue epilogue_of(float low, float high, const ConvFusion& fusion);

// Whether node `conv` (a conv2d) folds a per-channel gate on its input into its weights
// (ChannelGate, plan_builder.h): a pointwise conv on our packed GEMM, with conv fusion on, over at
// least twice as many pixels as its padded output channels, where scaling its k x n weights costs
// less than the m x k mul it saves (EfficientNet-B0's early blocks; not its 7x7 ones).
bool folds_channel_gate(const NodeContext& c, size_t conv);

}  // namespace mt::cpu
