// Rules for ops that compute shapes in the models mt imports: Shape, Size, ConstantOfShape, Range,
// the comparisons, Where, ReduceProd. They are evaluated here, on constants (up to
// kMaxShapeOpElements, beyond the size limit of ordinary folding); with a run-time input the
// comparisons and Where become mt's logic ops and ReduceProd reduce_prod, and ConstantOfShape and
// Range, whose output shape is their operands' value, are refused (--input-value can pin them).
#include <cmath>
#include <numeric>
#include <type_traits>

#include "lib/import/constant_values.h"
#include "lib/import/translators.h"
#include "lib/ops/broadcast.h"

namespace mt::onnx_import {
namespace {

void check_folded_size(const OnnxNode& node, const Shape& shape) {
  auto count = checked_numel(shape);
  if (!count || *count > kMaxShapeOpElements)
    node.unsupported("would create a constant of shape {}, larger than mt folds at import", shape_str(shape));
}

// For each element of `out`, the index of the element of a tensor of shape `in` broadcast to it.
std::vector<size_t> broadcast_index(const Shape& in, const Shape& out) {
  const auto strides = broadcast_strides(in, out);
  std::vector<size_t> index(static_cast<size_t>(numel(out)));
  std::vector<int64_t> coord(out.size(), 0);
  for (size_t i = 0; i < index.size(); ++i) {
    int64_t offset = 0;
    for (size_t d = 0; d < out.size(); ++d) offset += coord[d] * strides[d];
    index[i] = static_cast<size_t>(offset);
    for (size_t d = out.size(); d-- > 0;) {
      if (++coord[d] < out[d]) break;
      coord[d] = 0;
    }
  }
  return index;
}

Shape broadcast_of(const OnnxNode& node, const std::vector<const TensorInfo*>& inputs) {
  Shape out;
  for (const TensorInfo* in : inputs) {
    auto shape = broadcast_shapes(out, in->shape);
    if (!shape) node.invalid("cannot broadcast shapes {} and {}", shape_str(out), shape_str(in->shape));
    out = *shape;
  }
  check_folded_size(node, out);
  return out;
}

// Shape, with opset 15's start/end (negative counts from the end; both clamped to [0, rank]).
void shape(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const Shape dims = ctx.input_info(node, 0).shape;
  const auto rank = static_cast<int64_t>(dims.size());
  auto clamp_index = [rank](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clamp_index(node.attr_int("start", 0));
  const int64_t end = clamp_index(node.attr_int("end", rank));
  std::vector<int64_t> values;
  for (int64_t i = start; i < end; ++i) values.push_back(dims[static_cast<size_t>(i)]);
  ctx.add_constant(make_constant(node.output(0), DType::i64, {static_cast<int64_t>(values.size())}, values));
}

void size(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const int64_t count[] = {ctx.input_info(node, 0).numel()};
  ctx.add_constant(make_constant(node.output(0), DType::i64, {}, count));
}

void constant_of_shape(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const Shape dims = ctx.const_ints(node, 0, "shape");
  for (int64_t d : dims)
    if (d < 0) node.invalid("shape {} has a negative dimension", shape_str(dims));
  check_folded_size(node, dims);
  DType dtype = DType::f32;
  double fill = 0.0;
  if (const onnx::TensorProto* value = node.attr_tensor("value")) {
    const TensorInfo info = tensor_from_onnx(*value, node.output(0), ctx.external_files());
    if (info.numel() != 1) node.invalid("value must hold one element, got {}", info.numel());
    dtype = info.dtype;
    if (is_integer(dtype)) {
      const auto v = read_ints(info);
      ctx.add_constant(
          make_constant(node.output(0), dtype, dims, std::vector<int64_t>(static_cast<size_t>(numel(dims)), v[0])));
      return;
    }
    fill = read_doubles(info)[0];
  }
  ctx.add_constant(
      make_constant(node.output(0), dtype, dims, std::vector<double>(static_cast<size_t>(numel(dims)), fill)));
}

void range(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  ctx.require_known(node, {{0, "start"}, {1, "limit"}, {2, "delta"}});
  const DType dtype = ctx.input_info(node, 0).dtype;
  auto scalar = [&](size_t i, const char* what) {
    const TensorInfo& info = ctx.input_info(node, i);
    if (info.numel() != 1) node.invalid("{} must be a scalar", what);
    if (info.dtype != dtype) node.invalid("start, limit and delta must have one type");
    return info;
  };
  const TensorInfo start = scalar(0, "start"), limit = scalar(1, "limit"), delta = scalar(2, "delta");
  if (is_integer(dtype)) {
    const int64_t s = read_ints(start)[0], l = read_ints(limit)[0], d = read_ints(delta)[0];
    if (d == 0) node.invalid("delta is 0");
    const double steps = std::ceil((static_cast<double>(l) - static_cast<double>(s)) / static_cast<double>(d));
    const Shape out{static_cast<int64_t>(std::max(0.0, std::min(steps, static_cast<double>(kMaxElements))))};
    check_folded_size(node, out);
    std::vector<int64_t> values(static_cast<size_t>(out[0]));
    for (size_t i = 0; i < values.size(); ++i)
      if (__builtin_mul_overflow(static_cast<int64_t>(i), d, &values[i]) ||
          __builtin_add_overflow(values[i], s, &values[i]))
        node.invalid("overflows int64");
    ctx.add_constant(make_constant(node.output(0), dtype, out, values));
    return;
  }
  const double s = read_doubles(start)[0], l = read_doubles(limit)[0], d = read_doubles(delta)[0];
  if (d == 0.0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
    node.invalid("start, limit and delta must be finite and delta non-zero");
  const double steps = std::ceil((l - s) / d);
  const Shape out{static_cast<int64_t>(std::max(0.0, std::min(steps, static_cast<double>(kMaxElements))))};
  check_folded_size(node, out);
  std::vector<double> values(static_cast<size_t>(out[0]));
  for (size_t i = 0; i < values.size(); ++i) values[i] = s + static_cast<double>(i) * d;
  ctx.add_constant(make_constant(node.output(0), dtype, out, values));
}

bool all_inputs_constant(ImportContext& ctx, const OnnxNode& node) {
  for (size_t i = 0; i < node.num_inputs(); ++i)
    if (node.has_input(i) && !ctx.input_info(node, i).is_constant()) return false;
  return true;
}

// Equal, Less, LessOrEqual, Greater, GreaterOrEqual: a boolean tensor, numpy broadcasting.
// Evaluated here on constants (shape computations, up to kMaxShapeOpElements), else the logic
// op of the same name (`how`) at run time.
void compare(ImportContext& ctx, const OnnxNode& node, const std::string& how) {
  if (!all_inputs_constant(ctx, node)) {
    ctx.emit1(node, how, {ctx.input(node, 0), ctx.input(node, 1)}, {}, node.output(0));
    return;
  }
  const TensorInfo& a = ctx.input_info(node, 0);
  const TensorInfo& b = ctx.input_info(node, 1);
  const Shape out = broadcast_of(node, {&a, &b});
  const auto ia = broadcast_index(a.shape, out), ib = broadcast_index(b.shape, out);
  std::vector<int64_t> result(ia.size());
  auto apply = [&](const auto& x, const auto& y) {
    for (size_t i = 0; i < result.size(); ++i) {
      const auto u = x[ia[i]], v = y[ib[i]];
      result[i] = how == "equal"           ? u == v
                  : how == "less"          ? u < v
                  : how == "less_or_equal" ? u <= v
                  : how == "greater"       ? u > v
                                           : u >= v;
    }
  };
  if (is_integer(a.dtype) && is_integer(b.dtype))
    apply(read_ints(a), read_ints(b));
  else
    apply(read_doubles(a), read_doubles(b));
  ctx.add_constant(make_constant(node.output(0), DType::boolean, out, result));
}

// Where: evaluated here on constants, else the where op at run time.
void where(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  if (!all_inputs_constant(ctx, node)) {
    ctx.emit1(node, "where", {ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)}, {}, node.output(0));
    return;
  }
  const TensorInfo& cond = ctx.input_info(node, 0);
  const TensorInfo& x = ctx.input_info(node, 1);
  const TensorInfo& y = ctx.input_info(node, 2);
  if (x.dtype != y.dtype)
    node.invalid("X and Y must have one type, got {} and {}", dtype_name(x.dtype), dtype_name(y.dtype));
  const Shape out = broadcast_of(node, {&cond, &x, &y});
  const auto ic = broadcast_index(cond.shape, out), ix = broadcast_index(x.shape, out),
             iy = broadcast_index(y.shape, out);
  const auto c = read_ints(cond);
  auto pick = [&](const auto& xs, const auto& ys) {
    std::decay_t<decltype(xs)> result(ic.size());
    for (size_t i = 0; i < result.size(); ++i) result[i] = c[ic[i]] != 0 ? xs[ix[i]] : ys[iy[i]];
    ctx.add_constant(make_constant(node.output(0), x.dtype, out, result));
  };
  if (is_integer(x.dtype))
    pick(read_ints(x), read_ints(y));
  else
    pick(read_doubles(x), read_doubles(y));
}

// ReduceProd: axes an attribute before opset 18, an input from 18. Of a constant (the product of
// a shape's dimensions, in any integer type) it is evaluated here; else the reduce_prod op.
void reduce_prod(ImportContext& ctx, const OnnxNode& node, const std::string&) {
  const TensorInfo& x = ctx.input_info(node, 0);
  if (!x.is_constant()) return translate_reduce(ctx, node, "reduce_prod");
  std::vector<int64_t> axes = node.opset() >= 18
                                  ? (node.has_input(1) ? ctx.const_ints(node, 1, "axes") : std::vector<int64_t>{})
                                  : node.attr_ints("axes");
  const bool keepdims = node.attr_int("keepdims", 1) != 0;
  if (axes.empty() && node.opset() >= 18 && node.attr_int("noop_with_empty_axes", 0) != 0) {
    ctx.alias(node.output(0), ctx.input(node, 0));
    return;
  }
  std::vector<bool> reduced(x.shape.size(), axes.empty());
  for (int64_t axis : axes) reduced[static_cast<size_t>(node_axis(node, axis, x.shape.size()))] = true;
  Shape kept_shape, out_shape;  // kept_shape: rank preserved, reduced axes 1
  for (size_t d = 0; d < x.shape.size(); ++d) {
    kept_shape.push_back(reduced[d] ? 1 : x.shape[d]);
    if (!reduced[d] || keepdims) out_shape.push_back(kept_shape.back());
  }
  // Element i of x lands in the output element its coordinates give with reduced axes at 0.
  const auto x_to_out = broadcast_index(kept_shape, x.shape);
  auto product = [&](const auto& values, auto one) {
    std::vector<decltype(one)> result(static_cast<size_t>(numel(kept_shape)), one);
    for (size_t i = 0; i < values.size(); ++i) {
      auto& r = result[x_to_out[i]];
      if constexpr (std::is_integral_v<decltype(one)>) {
        if (__builtin_mul_overflow(r, values[i], &r)) node.invalid("the product overflows int64");
      } else {
        r *= values[i];
      }
    }
    ctx.add_constant(make_constant(node.output(0), x.dtype, out_shape, result));
  };
  if (is_integer(x.dtype))
    product(read_ints(x), int64_t{1});
  else
    product(read_doubles(x), 1.0);
}

}  // namespace

void add_folding_translators(TranslatorTable& table) {
  table.add("Shape", shape);
  table.add("Size", size);
  table.add("ConstantOfShape", constant_of_shape);
  table.add("Range", range);
  table.add("Equal", compare, "equal");
  table.add("Less", compare, "less");
  table.add("LessOrEqual", compare, "less_or_equal");
  table.add("Greater", compare, "greater");
  table.add("GreaterOrEqual", compare, "greater_or_equal");
  table.add("Where", where);
  table.add("ReduceProd", reduce_prod);
}

}  // namespace mt::onnx_import
