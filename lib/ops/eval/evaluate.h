// Constant folding's one evaluator: a node computed ahead of time, on constant inputs, by the
// reference kernels. The importer folds with it as it translates (lib/import/import_context.cpp),
// mt-fuse's fold_constants pass after the other passes (lib/passes/fold_constants.cpp); both ask
// fold_size_allowed() first, so a node folds or not by the same rule whichever tool meets it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "lib/ir/graph.h"

namespace mt {

// The size limit of folding, in elements (not bytes, so that a cast or dequantize of a weight to
// float32 folds like any other elementwise op): a node folds when its outputs hold at most
// kFoldMaxGrowth times its inputs' elements, or at most kFoldSmallElements. Folding trades
// run-time work for model size, and an expand of a scalar to a feature map or a tile of a row
// would only bloat the file (and let a small hostile model make the importer allocate
// gigabytes), while everything that must fold stays far below it: shape computations, weights
// reshaped, transposed, cast or concatenated (growth 1), and small broadcasts (a bias made 2-D).
// 4096 elements are 16 KiB of float32, the floor mt-fuse(1) always had; see docs/ARCHITECTURE.md.
inline constexpr int64_t kFoldMaxGrowth = 2;
inline constexpr int64_t kFoldSmallElements = 4096;

// Whether outputs of `output_elements` elements in all may replace a node whose present inputs
// hold `input_elements`.
bool fold_size_allowed(int64_t input_elements, int64_t output_elements);

// Whether the op has a reference kernel, which evaluate_node() needs, and may be folded (not an op
// whose output has a run-time count of valid rows: lib/ops/valid_rows.h).
bool can_evaluate(std::string_view op);

// The values of `node`'s outputs, each the size of `outputs`' dtype and shape (as shape inference
// gave them), computed from constant `inputs` (nullptr for an absent optional input) by the op's
// reference kernel; nullopt when the op has none or must not fold (can_evaluate), or its kernel refuses the node
// (Error(unsupported): a dtype or attribute value it does not implement), so that the node is
// left to run at run time. Other errors propagate.
std::optional<std::vector<ConstData>> evaluate_node(const Node& node, std::span<const TensorInfo* const> inputs,
                                                    std::span<const TensorInfo* const> outputs);

}  // namespace mt
