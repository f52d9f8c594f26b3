// Rules for matrix products (and Det), normalisation, softmax and reductions: Gemm, MatMul,
// BatchNormalization, LayerNormalization, InstanceNormalization, LRN, Softmax/LogSoftmax/Hardmax, the Reduce* ops,
// ArgMax/ArgMin, TopK and CumSum.
#include "lib/import/translators.h"

namespace mt::onnx_import {
namespace {

// Y = alpha * A' B' + beta * C. With a constant B this is `linear` with the transposed and
// scaled weight computed now (and C as its bias when C is a vector); otherwise matmul, mul, add.
void gemm(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const double alpha = node.attr_float("alpha", 1.0);
  const double beta = node.attr_float("beta", 1.0);
  const bool trans_a = node.attr_int("transA", 0) != 0;
  const bool trans_b = node.attr_int("transB", 0) != 0;
  input_of_rank(ctx, node, 0, 2, "A");
  const TensorInfo& b_info = input_of_rank(ctx, node, 1, 2, "B");
  const std::string& out = node.output(0);
  const Attributes swap{{"perm", std::vector<int64_t>{1, 0}}};

  std::string a = ctx.input(node, 0);
  if (trans_a) a = ctx.emit1(node, "transpose", {a}, swap, ctx.fresh_name(out + "/a_t"));
  std::string b = ctx.input(node, 1);
  std::string c = node.has_input(2) && beta != 0.0 ? ctx.input(node, 2) : std::string();
  const DType dtype = ctx.graph().tensor(a).dtype;
  if (!c.empty() && beta != 1.0)
    c = ctx.emit1(node, "mul", {c, ctx.scalar(node, beta, dtype)}, {}, ctx.fresh_name(out + "/c_scaled"));

  if (b_info.is_constant()) {
    const int64_t n = trans_b ? b_info.shape[0] : b_info.shape[1];
    std::string weight = trans_b ? b : ctx.emit1(node, "transpose", {b}, swap, ctx.fresh_name(b + "/t"));
    if (alpha != 1.0)
      weight = ctx.emit1(node, "mul", {weight, ctx.scalar(node, alpha, dtype)}, {}, ctx.fresh_name(b + "/scaled"));
    std::string bias;
    if (!c.empty() && ctx.is_constant(c)) {
      const TensorInfo& c_info = ctx.graph().tensor(c);
      if (c_info.numel() == n && (c_info.shape == Shape{n} || c_info.shape == Shape{1, n})) {
        bias = c_info.shape.size() == 1 ? c
                                        : ctx.emit1(node, "reshape", {c}, {{"shape", std::vector<int64_t>{n}}},
                                                    ctx.fresh_name(c + "/vector"));
      } else if (c_info.numel() == 1) {
        bias = ctx.emit1(node, "expand", {c}, {{"shape", std::vector<int64_t>{n}}}, ctx.fresh_name(c + "/vector"));
      }
      if (!bias.empty()) c.clear();
    }
    std::vector<std::string> inputs{a, weight};
    if (!bias.empty()) inputs.push_back(bias);
    const std::string y = ctx.emit1(node, "linear", inputs, {}, c.empty() ? out : ctx.fresh_name(out + "/linear"));
    if (!c.empty()) ctx.emit1(node, "add", {y, c}, {}, out);
    return;
  }
  if (trans_b) b = ctx.emit1(node, "transpose", {b}, swap, ctx.fresh_name(out + "/b_t"));
  const bool scale = alpha != 1.0;
  std::string y = ctx.emit1(node, "matmul", {a, b}, {}, scale || !c.empty() ? ctx.fresh_name(out + "/matmul") : out);
  if (scale)
    y = ctx.emit1(node, "mul", {y, ctx.scalar(node, alpha, dtype)}, {},
                  c.empty() ? out : ctx.fresh_name(out + "/scaled"));
  if (!c.empty()) ctx.emit1(node, "add", {y, c}, {}, out);
}

void matmul(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "matmul", {ctx.input(node, 0), ctx.input(node, 1)}, {}, node.output(0));
}

void det(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.emit1(node, "det", {ctx.input(node, 0)}, {}, node.output(0));
}

void batch_norm(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (node.attr_int("training_mode", 0) != 0) node.unsupported("training_mode=1");
  require_only_first_output(ctx, node, "running statistics");
  std::vector<std::string> inputs;
  for (size_t i = 0; i < 5; ++i) {
    if (!node.has_input(i)) node.invalid("input {} is required", i);
    inputs.push_back(ctx.input(node, i));
  }
  ctx.emit1(node, "batch_norm", inputs, {{"epsilon", node.attr_float("epsilon", 1e-5)}}, node.output(0));
}

bool output_used(ImportContext& ctx, const OnnxNode& node, size_t i) {
  return i < node.num_outputs() && !node.output(i).empty() && ctx.is_used(node.output(i));
}

// LayerNormalization's optional outputs Mean and InvStdDev (the statistics over dims [axis, rank),
// kept as size-1 dims) are computed beside mt's fused layer_norm, as ONNX's own function body for
// the op computes them: reduce_mean of X; 1 / sqrt(reduce_mean((X - Mean)^2) + epsilon).
void layer_norm(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const double epsilon = node.attr_float("epsilon", 1e-5);
  const int64_t axis_attr = node.attr_int("axis", -1);
  std::vector<std::string> inputs{ctx.input(node, 0), ctx.input(node, 1)};
  if (node.has_input(2)) inputs.push_back(ctx.input(node, 2));
  ctx.emit1(node, "layer_norm", inputs, {{"axis", axis_attr}, {"epsilon", epsilon}}, node.output(0));

  const bool mean_used = output_used(ctx, node, 1), inv_std_used = output_used(ctx, node, 2);
  if (!mean_used && !inv_std_used) return;
  if (node.attr_int("stash_type", 1) != 1)
    node.unsupported("stash_type {}: mt computes the statistics in float32 (stash_type 1)", node.attr_int("stash_type", 1));
  const std::string x = ctx.input(node, 0);
  const size_t rank = ctx.input_info(node, 0).shape.size();
  std::vector<int64_t> axes;
  for (auto a = static_cast<size_t>(node_axis(node, axis_attr, rank)); a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  const Attributes reduce{{"axes", axes}, {"keepdims", int64_t{1}}};
  const std::string mean =
      ctx.emit1(node, "reduce_mean", {x}, reduce, mean_used ? node.output(1) : ctx.fresh_name(node.output(0) + "/mean"));
  if (!inv_std_used) return;
  const std::string hint = node.output(0) + "/variance";
  const std::string centred = ctx.emit1(node, "sub", {x, mean}, {}, ctx.fresh_name(hint));
  const std::string squared = ctx.emit1(node, "mul", {centred, centred}, {}, ctx.fresh_name(hint));
  const std::string variance = ctx.emit1(node, "reduce_mean", {squared}, reduce, ctx.fresh_name(hint));
  const std::string shifted = ctx.emit1(node, "add", {variance, ctx.scalar(node, epsilon)}, {}, ctx.fresh_name(hint));
  const std::string std_dev = ctx.emit1(node, "sqrt", {shifted}, {}, ctx.fresh_name(hint));
  ctx.emit1(node, "div", {ctx.scalar(node, 1.0), std_dev}, {}, node.output(2));
}

// InstanceNormalization(x [N, C, D1, ...], scale [C], B [C]) normalises each (n, c) plane over its
// spatial dims: layer_norm from axis 2 (the same mean, variance and epsilon), then the per-channel
// scale and bias as [C, 1, ...] broadcasts.
void instance_norm(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& x = ctx.input_info(node, 0);
  const size_t rank = x.shape.size();
  if (rank < 3)
    node.invalid("input '{}' has rank {}; InstanceNormalization needs N, C and spatial dims", node.input(0), rank);
  const std::string& out = node.output(0);
  const std::string normalized = ctx.emit1(node, "layer_norm", {ctx.input(node, 0)},
                                           {{"axis", int64_t{2}}, {"epsilon", node.attr_float("epsilon", 1e-5)}},
                                           ctx.fresh_name(out + "/normalized"));
  std::vector<int64_t> per_channel(rank - 1, 1);
  per_channel[0] = x.shape[1];
  auto channel_operand = [&](size_t i, const char* what) {
    const TensorInfo& info = ctx.input_info(node, i);
    if (info.shape != Shape{x.shape[1]})
      node.invalid("{} '{}' has shape {}; it must be [{}], one value per channel", what, node.input(i),
                   shape_str(info.shape), x.shape[1]);
    return ctx.emit1(node, "reshape", {ctx.input(node, i)}, {{"shape", per_channel}}, ctx.fresh_name(out + "/" + what));
  };
  const std::string scaled =
      ctx.emit1(node, "mul", {normalized, channel_operand(1, "scale")}, {}, ctx.fresh_name(out + "/scaled"));
  ctx.emit1(node, "add", {scaled, channel_operand(2, "bias")}, {}, out);
}

// Before opset 13 Softmax coerces its input to 2-D at `axis` (default 1) and normalises each
// row; from 13 on it normalises along one axis (default -1). mt's softmax is the latter, so the
// old form becomes flatten + softmax + reshape unless the axis is already the last.
void softmax(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  const TensorInfo& x = ctx.input_info(node, 0);
  const size_t rank = x.shape.size();
  const std::string input = ctx.input(node, 0);
  if (node.opset() >= 13) {
    ctx.emit1(node, mt_op, {input}, {{"axis", node.attr_int("axis", -1)}}, node.output(0));
    return;
  }
  const int64_t raw_axis = node.attr_int("axis", 1);
  if (raw_axis < -static_cast<int64_t>(rank) || raw_axis > static_cast<int64_t>(rank))
    node.invalid("axis {} is out of range for rank {}", raw_axis, rank);
  const int64_t axis = raw_axis < 0 ? raw_axis + static_cast<int64_t>(rank) : raw_axis;
  if (rank == 0 || axis == static_cast<int64_t>(rank) - 1) {
    ctx.emit1(node, mt_op, {input}, {{"axis", int64_t{-1}}}, node.output(0));
    return;
  }
  const Shape shape = x.shape;
  const std::string& out = node.output(0);
  const std::string flat = ctx.emit1(node, "flatten", {input}, {{"axis", axis}}, ctx.fresh_name(out + "/2d"));
  const std::string soft = ctx.emit1(node, mt_op, {flat}, {{"axis", int64_t{-1}}}, ctx.fresh_name(out + "/" + mt_op));
  ctx.emit1(node, "reshape", {soft}, {{"shape", shape}}, out);
}

}  // namespace

// ReduceSum takes its axes as an input from opset 13, the other reductions from opset 18.
void translate_reduce(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  const bool axes_input = node.opset() >= (node.op_type() == "ReduceSum" ? 13 : 18);
  std::vector<int64_t> axes;
  if (axes_input) {
    if (node.has_input(1)) axes = ctx.const_ints(node, 1, "axes");
    if (axes.empty() && node.attr_int("noop_with_empty_axes", 0) != 0) {
      ctx.alias(node.output(0), ctx.input(node, 0));
      return;
    }
  } else {
    axes = node.attr_ints("axes");
  }
  ctx.emit1(node, mt_op, {ctx.input(node, 0)}, {{"axes", axes}, {"keepdims", node.attr_int("keepdims", 1)}},
            node.output(0));
}

namespace {

void lrn(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (!node.has_attr("size")) node.invalid("attribute 'size' is required");
  ctx.emit1(node, "lrn", {ctx.input(node, 0)},
            {{"size", node.attr_int("size", 1)},
             {"alpha", node.attr_float("alpha", 1e-4)},
             {"beta", node.attr_float("beta", 0.75)},
             {"bias", node.attr_float("bias", 1.0)}},
            node.output(0));
}

void arg_extreme(ImportContext& ctx, const OnnxNode& node, const std::string& mt_op) {
  ctx.emit1(node, mt_op, {ctx.input(node, 0)},
            {{"axis", node.attr_int("axis", 0)},
             {"keepdims", node.attr_int("keepdims", 1)},
             {"select_last_index", node.attr_int("select_last_index", 0)}},
            node.output(0));
}

// TopK: k an attribute before opset 10, a one-element operand from 10; both outputs always.
void top_k(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  int64_t k = node.attr_int("k", -1);
  if (node.opset() >= 10) {
    const std::vector<int64_t> operand = ctx.const_ints(node, 1, "K");
    if (operand.size() != 1) node.invalid("K must be one value, got {}", operand.size());
    k = operand[0];
  }
  std::vector<std::string> outputs;
  for (size_t i = 0; i < 2; ++i)
    outputs.push_back(i < node.num_outputs() && !node.output(i).empty()
                          ? node.output(i)
                          : ctx.fresh_name(node.name() + (i == 0 ? "/values" : "/indices")));
  ctx.emit(node, "top_k", {ctx.input(node, 0)},
           {{"k", k},
            {"axis", node.attr_int("axis", -1)},
            {"largest", node.attr_int("largest", 1)},
            {"sorted", node.attr_int("sorted", 1)}},
           outputs);
}

// CumSum's axis is a tensor operand; mt needs it when planning.
void cumsum(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const std::vector<int64_t> axis = ctx.const_ints(node, 1, "axis");
  if (axis.size() != 1) node.invalid("axis must be one value, got {}", axis.size());
  ctx.emit1(node, "cumsum", {ctx.input(node, 0)},
            {{"axis", axis[0]}, {"exclusive", node.attr_int("exclusive", 0)}, {"reverse", node.attr_int("reverse", 0)}},
            node.output(0));
}

}  // namespace

void add_network_translators(TranslatorTable& table) {
  table.add("Gemm", gemm);
  table.add("MatMul", matmul);
  table.add("Det", det);
  table.add("BatchNormalization", batch_norm);
  table.add("LayerNormalization", layer_norm);
  table.add("InstanceNormalization", instance_norm);
  table.add("LRN", lrn);
  table.add("Softmax", softmax, "softmax");
  table.add("LogSoftmax", softmax, "log_softmax");
  table.add("ReduceMean", translate_reduce, "reduce_mean");
  table.add("ReduceSum", translate_reduce, "reduce_sum");
  table.add("ReduceMax", translate_reduce, "reduce_max");
  table.add("ReduceMin", translate_reduce, "reduce_min");
  table.add("ReduceL1", translate_reduce, "reduce_l1");
  table.add("ReduceL2", translate_reduce, "reduce_l2");
  table.add("ReduceSumSquare", translate_reduce, "reduce_sum_square");
  table.add("ReduceLogSum", translate_reduce, "reduce_log_sum");
  table.add("ReduceLogSumExp", translate_reduce, "reduce_log_sum_exp");
  table.add("Hardmax", softmax, "hardmax");
  table.add("ArgMax", arg_extreme, "argmax");
  table.add("ArgMin", arg_extreme, "argmin");
  table.add("CumSum", cumsum);
  table.add("TopK", top_k);
}

}  // namespace mt::onnx_import
