// The optimisation passes of mt-fuse. Each rewrites a graph in place, touches no files, and
// records every rewrite in the report; pass_registry.h lists them with names and descriptions.
#pragma once

#include "lib/ir/graph.h"
#include "lib/passes/pass_report.h"

namespace mt::passes {

// batch_norm after conv2d, conv_transpose2d, linear or matmul with a constant 2-D B, folded into
// new weights and bias (matmul becomes linear). Only when the producer's output feeds nothing
// else, is not a graph output, has no fused activation, and weights and statistics are constant.
void fold_batch_norm(Graph& graph, PassReport& report);

// relu or clamp after conv2d, conv_transpose2d, linear or add, moved into the producer's
// act_min/act_max (intersected with bounds it already has); relu or clamp after relu or clamp,
// merged into one clamp. Only over a single-use tensor.
void fuse_activation(Graph& graph, PassReport& report);

// Nodes whose inputs are all constant, evaluated with the reference kernels and replaced by
// constants within the size limit of lib/ops/eval/evaluate.h (the importer's).
void fold_constants(Graph& graph, PassReport& report);

// Nodes that return their input unchanged: identity, reshape/flatten/squeeze/unsqueeze/expand to
// the same shape, transpose by the identity permutation, cast to the same dtype, slice/pad/resize
// that select everything, concat of one input, add/sub of constant 0, mul/div by constant 1.
void remove_identities(Graph& graph, PassReport& report);

// reshape/flatten/squeeze/unsqueeze chains become one reshape; transpose chains one transpose
// (or nothing, when the permutations cancel).
void merge_shape_chains(Graph& graph, PassReport& report);

// Nodes none of whose outputs is read or returned, and tensors nothing refers to.
void remove_dead_nodes(Graph& graph, PassReport& report);

// Subgraphs exporters write in primitive ops, replaced by the single op. Each checks that every
// intermediate tensor feeds only the subgraph and that the constants have the defining values.
void recognise_layer_norm(Graph& graph, PassReport& report);   // mean/sub/pow/mean/add/sqrt/div[/mul][/add]
void recognise_gelu(Graph& graph, PassReport& report);         // 0.5 * x * (1 + erf(x / sqrt 2)), tanh form
void recognise_silu(Graph& graph, PassReport& report);         // x * sigmoid(x)
void recognise_hardsigmoid(Graph& graph, PassReport& report);  // clamp(x + 3, 0, 6) / 6
void recognise_hardswish(Graph& graph, PassReport& report);    // x * hardsigmoid(x), x * clamp(x + 3, 0, 6) / 6
void recognise_linear(Graph& graph, PassReport& report);       // matmul(x, constant B) [+ constant bias]
// reduce_mean over axes {2, 3} of a float32 4-D tensor becomes global_avg_pool (+ a reshape to
// [N, C] when keepdims is 0). After recognise_layer_norm, whose pattern may hold such a mean.
void recognise_global_avg_pool(Graph& graph, PassReport& report);

}  // namespace mt::passes
