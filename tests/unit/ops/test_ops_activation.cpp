// Shape inference of the activation family: unary ops keep dtype and shape, prelu checks its
// slope, cast changes the dtype; every failure is an invalid_input naming what is wrong.
#include <doctest/doctest.h>

#include "lib/ops/registry.h"
#include "tests/unit/ops/infer_node_util.h"

using namespace mt;
using namespace mt::test;

TEST_CASE("activation: unary ops keep dtype and shape") {
  for (const char* op : {"relu", "sigmoid", "tanh", "hardswish", "silu", "erf", "exp", "log", "sqrt", "neg", "abs",
                         "reciprocal", "floor", "ceil", "softplus", "gelu", "clamp", "hardsigmoid", "leaky_relu",
                         "elu"}) {
    INFO("op ", std::string(op));
    REQUIRE(find_op(op) != nullptr);
    auto outputs = infer(op, {tensor({2, 3, 4})});
    REQUIRE(outputs.size() == 1);
    CHECK(outputs[0].dtype == DType::f32);
    CHECK(outputs[0].shape == Shape{2, 3, 4});
    CHECK(infer_shape(op, {tensor({})}) == Shape{});
    CHECK(infer(op, {tensor({5}, DType::f16)})[0].dtype == DType::f16);
    MT_CHECK_INFER_FAILS("expects 1 to 1 inputs, got 2", op, {tensor({2}), tensor({2})});
  }
}

TEST_CASE("activation: attribute defaults and types") {
  const OpSchema* clamp = find_op("clamp");
  REQUIRE(clamp != nullptr);
  Node node{.name = "c", .op = "clamp"};
  CHECK(attr_float(node, "min") == -static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(attr_float(node, "max") == static_cast<double>(std::numeric_limits<float>::max()));
  CHECK(attr_float(Node{.name = "h", .op = "hardsigmoid"}, "alpha") == 0.2);
  CHECK(attr_float(Node{.name = "h", .op = "hardsigmoid"}, "beta") == 0.5);
  CHECK(attr_float(Node{.name = "l", .op = "leaky_relu"}, "alpha") == 0.01);
  CHECK(attr_float(Node{.name = "e", .op = "elu"}, "alpha") == 1.0);
  CHECK(attr_string(Node{.name = "g", .op = "gelu"}, "approximate") == "none");
  MT_CHECK_INFER_FAILS("attribute 'min' must be float, got int", "clamp", {tensor({2})}, {{"min", int64_t{0}}});
  MT_CHECK_INFER_FAILS("unknown attribute 'alpha'", "relu", {tensor({2})}, {{"alpha", 0.5}});
}

TEST_CASE("activation: gelu approximate must be none or tanh") {
  CHECK(infer_shape("gelu", {tensor({3})}, {{"approximate", std::string("tanh")}}) == Shape{3});
  CHECK(infer_shape("gelu", {tensor({3})}, {{"approximate", std::string("none")}}) == Shape{3});
  MT_CHECK_INFER_FAILS("attribute 'approximate' must be \"none\" or \"tanh\", got \"erf\"", "gelu", {tensor({3})},
                       {{"approximate", std::string("erf")}});
}

TEST_CASE("activation: prelu slope broadcasts to X") {
  CHECK(infer_shape("prelu", {tensor({1, 3, 4, 4}), tensor({3, 1, 1})}) == Shape{1, 3, 4, 4});
  CHECK(infer_shape("prelu", {tensor({1, 3, 4, 4}), tensor({1})}) == Shape{1, 3, 4, 4});
  CHECK(infer_shape("prelu", {tensor({2, 5}), tensor({5})}) == Shape{2, 5});
  CHECK(infer_shape("prelu", {tensor({2, 5}), tensor({})}) == Shape{2, 5});
  MT_CHECK_INFER_FAILS("slope 'in1' has shape 3, which does not broadcast to 1x3x4x4", "prelu",
                       {tensor({1, 3, 4, 4}), tensor({3})});
  // Broadcasting must not grow X.
  MT_CHECK_INFER_FAILS("does not broadcast to 5", "prelu", {tensor({5}), tensor({2, 5})});
  MT_CHECK_INFER_FAILS("input 'in1' is float16 but input 'in0' is float32", "prelu",
                       {tensor({5}), tensor({5}, DType::f16)});
  MT_CHECK_INFER_FAILS("expects 2 to 2 inputs, got 1", "prelu", {tensor({5})});
}

TEST_CASE("activation: cast sets the output dtype") {
  auto outputs = infer("cast", {tensor({2, 2})}, {{"to", std::string("int64")}});
  CHECK(outputs[0].dtype == DType::i64);
  CHECK(outputs[0].shape == Shape{2, 2});
  for (const char* name : {"float32", "float16", "int64", "int32", "int8", "uint8", "bool"})
    CHECK(dtype_name(infer("cast", {tensor({1}, DType::i32)}, {{"to", std::string(name)}})[0].dtype) == name);
  MT_CHECK_INFER_FAILS("missing required attribute 'to'", "cast", {tensor({2})});
  MT_CHECK_INFER_FAILS("attribute 'to' = \"double\" is not a dtype", "cast", {tensor({2})}, {{"to", std::string("double")}});
}
