// Cases of the activation family: each unary op on a 4-D NCHW tensor with odd channel counts, a
// 2-D and a 1-D tensor, over a value range inside its domain; attribute variants; the values
// random data misses (round's halves, sign's zeros); prelu slopes broadcast several ways; cast
// between dtypes.
#include "tests/ops/op_cases.h"

namespace mt::optest {
namespace {

// Shapes every unary op is run on: NCHW with odd channels, a matrix, a long vector (vector tails).
const std::vector<Shape> kUnaryShapes = {{1, 7, 5, 3}, {2, 13}, {1000}};

void unary(CaseTable& table, const std::string& op, double low, double high, Attributes attrs = {},
           const std::string& variant = "") {
  for (const auto& shape : kUnaryShapes)
    table.add(op, {.name = shape_str(shape) + (variant.empty() ? "" : " " + variant), .inputs = {in(shape, low, high)},
                   .attrs = attrs});
}

}  // namespace

void add_activation_cases(CaseTable& t) {
  for (const char* op : {"relu", "sigmoid", "tanh", "hardswish", "silu", "erf", "neg", "abs", "floor", "ceil"})
    unary(t, op, -4, 4);
  unary(t, "exp", -6, 6);
  // exp(-x) past both ends of float's range (AVX-512 silu clamps its argument there).
  t.add("silu", {.name = "wide range", .inputs = {in({1000}, -120, 120)}});
  unary(t, "softplus", -20, 20);
  unary(t, "log", 0.01, 10);
  unary(t, "sqrt", 0, 10);
  unary(t, "reciprocal", 0.1, 4);
  t.add("reciprocal", {.name = "negative", .inputs = {in({3, 5}, -4, -0.1)}});
  unary(t, "gelu", -5, 5);
  unary(t, "gelu", -5, 5, {{"approximate", std::string("tanh")}}, "tanh");
  unary(t, "clamp", -3, 3);  // no bounds
  unary(t, "clamp", -8, 8, {{"min", 0.0}, {"max", 6.0}}, "relu6");
  t.add("clamp", {.name = "min only", .inputs = {in({2, 9}, -2, 2)}, .attrs = {{"min", 0.1}}});
  t.add("clamp", {.name = "max only", .inputs = {in({2, 9}, -2, 2)}, .attrs = {{"max", -0.2}}});
  unary(t, "hardsigmoid", -5, 5);
  unary(t, "hardsigmoid", -5, 5, {{"alpha", 1.0 / 6}, {"beta", 0.5}}, "alpha 1/6");
  unary(t, "leaky_relu", -3, 3);
  unary(t, "leaky_relu", -3, 3, {{"alpha", 0.2}}, "alpha 0.2");
  unary(t, "elu", -4, 4);
  unary(t, "elu", -4, 4, {{"alpha", 0.5}}, "alpha 0.5");

  for (const char* op : {"cos", "sin", "atan", "sinh", "cosh", "asinh", "softsign", "sign", "round"})
    unary(t, op, -4, 4);
  unary(t, "tan", -1.4, 1.4);  // inside (-pi/2, pi/2)
  for (const char* op : {"acos", "asin", "atanh"}) unary(t, op, -0.99, 0.99);
  unary(t, "acosh", 1, 10);
  // Halves round to even; zero keeps its sign.
  t.add("round", {.name = "halves and zeros",
                  .inputs = {given(DType::f32, {12},
                                   {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.0, 0.0, 0.49999997, 4194304.5, -7.5})}});
  t.add("sign", {.name = "zeros", .inputs = {given(DType::f32, {2, 3}, {0.0, -0.0, 1e-30, -1e-30, 5, -5})}});
  unary(t, "selu", -4, 4);
  unary(t, "selu", -4, 4, {{"alpha", 2.0}, {"gamma", 3.0}}, "alpha 2 gamma 3");
  unary(t, "celu", -4, 4);
  unary(t, "celu", -4, 4, {{"alpha", 2.0}}, "alpha 2");
  unary(t, "thresholded_relu", -3, 3);
  unary(t, "thresholded_relu", -3, 3, {{"alpha", 0.5}}, "alpha 0.5");
  unary(t, "shrink", -3, 3);
  unary(t, "shrink", -3, 3, {{"lambd", 1.5}, {"bias", 1.5}}, "lambd 1.5 bias 1.5");
  unary(t, "shrink", -3, 3, {{"lambd", -0.5}, {"bias", 0.25}}, "negative lambd");

  t.add("prelu", {.name = "per channel [C,1,1]", .inputs = {in({1, 5, 4, 3}), weight({5, 1, 1}, 0, 0.5)}});
  t.add("prelu", {.name = "single slope [1]", .inputs = {in({2, 3, 4, 4}), weight({1}, 0, 0.5)}});
  t.add("prelu", {.name = "full shape", .inputs = {in({2, 6}), weight({2, 6}, -0.5, 0.5)}});
  t.add("prelu", {.name = "slope as input", .inputs = {in({1, 3, 2, 2}), in({3, 1, 1})}});

  t.add("cast", {.name = "float32 to int32 (truncation)", .inputs = {in({2, 7}, -20, 20)}, .attrs = {{"to", std::string("int32")}}});
  t.add("cast", {.name = "float32 to int64", .inputs = {in({9}, -50, 50)}, .attrs = {{"to", std::string("int64")}}});
  t.add("cast", {.name = "float32 to bool", .inputs = {in({3, 4}, -1, 1)}, .attrs = {{"to", std::string("bool")}}});
  t.add("cast", {.name = "int64 to float32", .inputs = {typed(DType::i64, {2, 5}, -1000, 1000)},
                 .attrs = {{"to", std::string("float32")}}});
  t.add("cast", {.name = "int32 to int64", .inputs = {typed(DType::i32, {6}, -100, 100)}, .attrs = {{"to", std::string("int64")}}});
  t.add("cast", {.name = "float32 to float32", .inputs = {in({1, 3, 2, 2})}, .attrs = {{"to", std::string("float32")}}});
  t.add("cast", {.name = "uint8 to float32", .inputs = {typed(DType::u8, {4, 4}, 0, 256)}, .attrs = {{"to", std::string("float32")}}});
}

}  // namespace mt::optest
