// Rules for indexing and layout ops: Trilu, Tile, GatherElements, GatherND, ScatterElements (and
// its old name Scatter), ScatterND, OneHot onto the index family; DepthToSpace and SpaceToDepth as
// reshape, transpose, reshape (the permutation they are, so every backend runs them);
// MeanVarianceNormalization as ONNX's own function body of reductions and arithmetic; EyeLike,
// whose output depends only on the input's static shape, folded into a constant.
#include <algorithm>
#include <vector>

#include "lib/import/constant_values.h"
#include "lib/import/onnx_tensor.h"
#include "lib/import/translators.h"
#include "lib/ops/index_loops.h"

namespace mt::onnx_import {
namespace {

// Trilu's k is read at run time (it may be a graph input); only its type is checked here.
void trilu(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  std::vector<std::string> inputs{ctx.input(node, 0)};
  if (node.has_input(1)) inputs.push_back(ctx.input(node, 1));
  ctx.emit1(node, "trilu", inputs, {{"upper", node.attr_int("upper", 1)}}, node.output(0));
}

void tile(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "tile", {ctx.input(node, 0)}, {{"repeats", ctx.const_ints(node, 1, "repeats")}}, node.output(0));
}

void gather_elements(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "gather_elements", {ctx.input(node, 0), ctx.input(node, 1)}, {{"axis", node.attr_int("axis", 0)}},
            node.output(0));
}

void gather_nd(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "gather_nd", {ctx.input(node, 0), ctx.input(node, 1)},
            {{"batch_dims", node.attr_int("batch_dims", 0)}}, node.output(0));
}

std::string reduction(const OnnxNode& node) {
  const std::string name = node.attr_string("reduction", "none");
  if (!scatter_reduction(name)) node.unsupported("reduction '{}'", name);
  return name;
}

// ScatterElements, and Scatter (its name before opset 11: the same op without a reduction).
void scatter_elements(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "scatter_elements", {ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)},
            {{"axis", node.attr_int("axis", 0)}, {"reduction", reduction(node)}}, node.output(0));
}

void scatter_nd(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "scatter_nd", {ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)},
            {{"reduction", reduction(node)}}, node.output(0));
}

// OneHot: depth (the output's size) must be constant; the off/on values are read at run time.
void one_hot(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::vector<double> depth = ctx.const_floats(node, 1, "depth");
  if (depth.size() != 1) node.invalid("depth must be one value, got {}", depth.size());
  // ONNX casts a fractional depth to an integer, as a cast would (toward zero).
  if (!(depth[0] >= 1 && depth[0] < 1e9)) node.invalid("depth {} is not a positive size", depth[0]);
  ctx.emit1(node, "one_hot", {ctx.input(node, 0), ctx.input(node, 2)},
            {{"depth", static_cast<int64_t>(depth[0])}, {"axis", node.attr_int("axis", -1)}}, node.output(0));
}

// Emits reshape(x, split) -> transpose(perm) -> reshape(out_shape) as the node's output.
void permute_blocks(ImportContext& ctx, const OnnxNode& node, const std::vector<int64_t>& split,
                    const std::vector<int64_t>& perm, const std::vector<int64_t>& out_shape) {
  const std::string& out = node.output(0);
  const std::string blocks =
      ctx.emit1(node, "reshape", {ctx.input(node, 0)}, {{"shape", split}}, ctx.fresh_name(out + "/blocks"));
  const std::string moved = ctx.emit1(node, "transpose", {blocks}, {{"perm", perm}}, ctx.fresh_name(out + "/moved"));
  ctx.emit1(node, "reshape", {moved}, {{"shape", out_shape}}, out);
}

int64_t blocksize(const OnnxNode& node) {
  const int64_t b = node.attr_int("blocksize", 0);
  if (b < 1) node.invalid("blocksize must be at least 1, got {}", b);
  return b;
}

// DepthToSpace: channel c*b*b.. of [N, C, H, W] moves into a b x b block of [N, C/(b*b), H*b, W*b];
// DCR takes the block offset from the channel's high part (depth, column, row), CRD from its low.
void depth_to_space(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const Shape x = input_of_rank(ctx, node, 0, 4, "input").shape;
  const int64_t b = blocksize(node);
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  if (c % (b * b) != 0) node.invalid("{} channels are not a multiple of blocksize^2 = {}", c, b * b);
  const int64_t depth = c / (b * b);
  const std::string mode = node.attr_string("mode", "DCR");
  if (mode == "DCR") permute_blocks(ctx, node, {n, b, b, depth, h, w}, {0, 3, 4, 1, 5, 2}, {n, depth, h * b, w * b});
  else if (mode == "CRD")
    permute_blocks(ctx, node, {n, depth, b, b, h, w}, {0, 1, 4, 2, 5, 3}, {n, depth, h * b, w * b});
  else node.invalid("mode '{}' is not DCR or CRD", mode);
}

// SpaceToDepth: the inverse of DepthToSpace in DCR mode.
void space_to_depth(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const Shape x = input_of_rank(ctx, node, 0, 4, "input").shape;
  const int64_t b = blocksize(node);
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  if (h % b != 0 || w % b != 0) node.invalid("height {} and width {} must be multiples of blocksize {}", h, w, b);
  permute_blocks(ctx, node, {n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, {n, c * b * b, h / b, w / b});
}

// ONNX's function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9), means over 'axes'.
void mean_variance_normalization(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::string x = ctx.input(node, 0);
  const DType dtype = ctx.input_info(node, 0).dtype;
  const std::string& out = node.output(0);
  const Attributes mean_attrs{{"axes", node.attr_ints("axes", {0, 2, 3})}, {"keepdims", int64_t{1}}};
  auto name = [&](const char* what) { return ctx.fresh_name(out + "/" + what); };
  const std::string mean = ctx.emit1(node, "reduce_mean", {x}, mean_attrs, name("mean"));
  const std::string mean_squared = ctx.emit1(node, "mul", {mean, mean}, {}, name("mean_squared"));
  const std::string squares = ctx.emit1(node, "mul", {x, x}, {}, name("squares"));
  const std::string mean_of_squares = ctx.emit1(node, "reduce_mean", {squares}, mean_attrs, name("mean_of_squares"));
  const std::string variance = ctx.emit1(node, "sub", {mean_of_squares, mean_squared}, {}, name("variance"));
  const std::string deviation = ctx.emit1(node, "sqrt", {variance}, {}, name("deviation"));
  const std::string centered = ctx.emit1(node, "sub", {x, mean}, {}, name("centered"));
  const std::string divisor = ctx.emit1(node, "add", {deviation, ctx.scalar(node, 1e-9, dtype)}, {}, name("divisor"));
  ctx.emit1(node, "div", {centered, divisor}, {}, out);
}

// EyeLike: ones on diagonal k of a matrix of the input's shape, in 'dtype' (default the input's).
void eye_like(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& x = input_of_rank(ctx, node, 0, 2, "input");
  DType dtype = x.dtype;
  if (node.has_attr("dtype")) {
    const auto onnx_type = static_cast<int32_t>(node.attr_int("dtype", 0));
    const std::optional<DType> converted = dtype_from_onnx(onnx_type);
    if (!converted) node.unsupported("output element type {}, which mt does not support", onnx_type_name(onnx_type));
    dtype = *converted;
  }
  const int64_t rows = x.shape[0], cols = x.shape[1];
  // Beyond +-(rows + cols) no diagonal is inside the matrix; clamping keeps i + k from overflowing.
  const int64_t k = std::clamp<int64_t>(node.attr_int("k", 0), -rows - cols, rows + cols);
  std::vector<int64_t> values(static_cast<size_t>(rows * cols), 0);
  for (int64_t i = 0; i < rows; ++i)
    if (i + k >= 0 && i + k < cols) values[static_cast<size_t>(i * cols + i + k)] = 1;
  ctx.add_constant(make_constant(node.output(0), dtype, x.shape, values));
}

}  // namespace

void add_index_translators(TranslatorTable& table) {
  table.add("Trilu", trilu);
  table.add("Tile", tile);
  table.add("GatherElements", gather_elements);
  table.add("GatherND", gather_nd);
  table.add("ScatterElements", scatter_elements);
  table.add("Scatter", scatter_elements);
  table.add("ScatterND", scatter_nd);
  table.add("DepthToSpace", depth_to_space);
  table.add("SpaceToDepth", space_to_depth);
  table.add("MeanVarianceNormalization", mean_variance_normalization);
  table.add("EyeLike", eye_like);
  table.add("OneHot", one_hot);
}

}  // namespace mt::onnx_import
