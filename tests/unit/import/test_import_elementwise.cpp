// Element-wise rules: op names, attributes, Clip by opset (and with run-time bounds), Cast and
// CastLike, variadic ops, Mod, BitShift, the boolean ops and run-time comparisons, and the ops that
// vanish (Identity, Dropout and its all-true mask, Constant).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "lib/import/constant_values.h"
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

Graph unary_model(const std::string& op, int opset = 13, const std::function<void(onnx::NodeProto&)>& attrs = {}) {
  OnnxBuilder b(opset);
  b.input("x", {4}).output("y");
  auto& node = b.node(op, {"x"}, {"y"});
  if (attrs) attrs(node);
  return b.import();
}

TEST_CASE("unary ops map to their mt names and compute") {
  const std::vector<float> x{-2.0f, -0.5f, 0.5f, 2.0f};
  struct Case {
    const char* onnx;
    const char* mt;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {"Relu", "relu", {0, 0, 0.5f, 2}},
      {"Neg", "neg", {2, 0.5f, -0.5f, -2}},
      {"Abs", "abs", {2, 0.5f, 0.5f, 2}},
      {"Floor", "floor", {-2, -1, 0, 2}},
      {"Ceil", "ceil", {-2, -0, 1, 2}},
      {"Exp", "exp", {std::exp(-2.0f), std::exp(-0.5f), std::exp(0.5f), std::exp(2.0f)}},
      {"Sigmoid", "sigmoid", {0.11920292f, 0.37754067f, 0.62245933f, 0.88079708f}},
      {"Tanh", "tanh", {std::tanh(-2.0f), std::tanh(-0.5f), std::tanh(0.5f), std::tanh(2.0f)}},
      {"Erf", "erf", {std::erf(-2.0f), std::erf(-0.5f), std::erf(0.5f), std::erf(2.0f)}},
      {"Reciprocal", "reciprocal", {-0.5f, -2, 2, 0.5f}},
      {"Softplus",
       "softplus",
       {std::log1p(std::exp(-2.0f)), std::log1p(std::exp(-0.5f)), std::log1p(std::exp(0.5f)),
        std::log1p(std::exp(2.0f))}},
      {"HardSwish", "hardswish", {-2.0f * 1 / 6, -0.5f * 2.5f / 6, 0.5f * 3.5f / 6, 2.0f * 5 / 6}},
  };
  for (const auto& c : cases) {
    INFO(c.onnx);
    Graph g = unary_model(c.onnx, 14);
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op == c.mt);
    check_close(run_graph(g, {x}), c.expected, 1e-5);
  }
}

TEST_CASE("activation attributes: LeakyRelu, Elu, HardSigmoid defaults and values") {
  Graph g = unary_model("LeakyRelu");
  CHECK(std::get<double>(g.nodes[0].attrs.at("alpha")) == doctest::Approx(0.01));
  g = unary_model("LeakyRelu", 13, [](auto& n) { attr_float(n, "alpha", 0.25f); });
  check_close(run_graph(g, {{-4, -1, 0, 2}}), {-1, -0.25f, 0, 2});
  g = unary_model("Elu", 13, [](auto& n) { attr_float(n, "alpha", 2.0f); });
  CHECK(g.nodes[0].op == "elu");
  CHECK(std::get<double>(g.nodes[0].attrs.at("alpha")) == 2.0);
  g = unary_model("HardSigmoid");
  CHECK(g.nodes[0].op == "hardsigmoid");
  check_close(run_graph(g, {{-3, 0, 1, 3}}), {0, 0.5f, 0.7f, 1});
  g = unary_model("HardSigmoid", 13, [](auto& n) {
    attr_float(n, "alpha", 1.0f / 6);
    attr_float(n, "beta", 0.5f);
  });
  check_close(run_graph(g, {{-3, 0, 1.5f, 3}}), {0, 0.5f, 0.75f, 1});
}

TEST_CASE("Clip: attributes before opset 11, constant inputs from 11, missing bounds are FLT_MAX") {
  Graph g = unary_model("Clip", 9, [](auto& n) {
    attr_float(n, "min", 0.0f);
    attr_float(n, "max", 6.0f);
  });
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op == "clamp");
  check_close(run_graph(g, {{-1, 3, 6, 7}}), {0, 3, 6, 6});

  OnnxBuilder b(11);
  b.input("x", {4}).output("y");
  b.init("lo", {}, {-1.0f});
  b.node("Clip", {"x", "lo"}, {"y"});
  g = b.import();
  CHECK(std::get<double>(g.nodes[0].attrs.at("min")) == -1.0);
  CHECK(std::get<double>(g.nodes[0].attrs.at("max")) == FLT_MAX);
  check_close(run_graph(g, {{-5, 0, 5, 1e30f}}), {-1, 0, 5, 1e30f});

  // A bound computed at run time: max(x, min), then min(.., max), as ONNX defines Clip.
  OnnxBuilder runtime_bound(13);
  runtime_bound.input("x", {4}).input("hi", {}).output("y");
  runtime_bound.node("Clip", {"x", "", "hi"}, {"y"}, "clip");
  g = runtime_bound.import();
  REQUIRE(g.nodes.size() == 1);
  CHECK(g.nodes[0].op == "min");
  check_close(run_graph(g, {{-5, 0, 5, 9}, {4}}), {-5, 0, 4, 4});

  OnnxBuilder both(13);
  both.input("x", {4}).input("lo", {}).input("hi", {}).output("y");
  both.node("Clip", {"x", "lo", "hi"}, {"y"}, "clip");
  g = both.import();
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].op == "max");
  CHECK(g.nodes[1].op == "min");
  check_close(run_graph(g, {{-5, 0, 5, 9}, {-1}, {4}}), {-1, 0, 4, 4});
  check_close(run_graph(g, {{-5, 0, 5, 9}, {3}, {1}}), {1, 1, 1, 1});  // min > max: max everywhere

  OnnxBuilder not_scalar(13);
  not_scalar.input("x", {4}).input("hi", {2}).output("y");
  not_scalar.node("Clip", {"x", "", "hi"}, {"y"}, "clip");
  Error e = import_error(not_scalar);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("node 'clip' (Clip): max must be a scalar") != std::string::npos);
}

TEST_CASE("binary ops, and Pow with an exponent of another type") {
  for (auto [onnx_op, mt_op] : std::vector<std::pair<std::string, std::string>>{{"Add", "add"},
                                                                                {"Sub", "sub"},
                                                                                {"Mul", "mul"},
                                                                                {"Div", "div"},
                                                                                {"Pow", "pow"},
                                                                                {"Max", "max"},
                                                                                {"Min", "min"}}) {
    OnnxBuilder b;
    b.input("a", {2, 2}).input("b", {2}).output("y");
    b.node(onnx_op, {"a", "b"}, {"y"});
    Graph g = b.import();
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op == mt_op);
    CHECK(g.tensor("y").shape == Shape{2, 2});
  }
  OnnxBuilder b;
  b.input("a", {3}).output("y");
  b.init_i64("e", {}, {2});
  b.node("Pow", {"a", "e"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"pow"});
  CHECK(g.tensor(g.nodes[0].inputs[1]).dtype == DType::f32);
  check_close(run_graph(g, {{1, 2, 3}}), {1, 4, 9});
}

TEST_CASE("variadic Max, Min, Sum become chains; Mean divides; a single input is a rename") {
  OnnxBuilder b;
  b.input("a", {2}).input("b", {2}).input("c", {2}).output("mx").output("sum").output("mean").output("one");
  b.node("Max", {"a", "b", "c"}, {"mx"});
  b.node("Sum", {"a", "b", "c"}, {"sum"});
  b.node("Mean", {"a", "b", "c"}, {"mean"});
  b.node("Min", {"a"}, {"one"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"max", "max", "add", "add", "add", "add", "div", "identity"});
  const std::vector<std::vector<float>> in{{1, -1}, {5, -2}, {3, -3}};
  check_close(run_graph(g, in, 0), {5, -1});
  check_close(run_graph(g, in, 1), {9, -6});
  check_close(run_graph(g, in, 2), {3, -2});
  check_close(run_graph(g, in, 3), {1, -1});
}

TEST_CASE("Cast: to another type is a cast node, to the same type vanishes, on constants folds") {
  OnnxBuilder b;
  b.input("x", {3}).output("i").output("f");
  attr_int(b.node("Cast", {"x"}, {"i"}), "to", onnx::TensorProto::INT64);
  attr_int(b.node("Cast", {"x"}, {"same"}), "to", onnx::TensorProto::FLOAT);
  b.node("Relu", {"same"}, {"f"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"cast", "relu"});
  CHECK(std::get<std::string>(producer(g, "i").attrs.at("to")) == "int64");
  CHECK(g.tensor("i").dtype == DType::i64);
  CHECK(producer(g, "f").inputs == std::vector<std::string>{"x"});

  OnnxBuilder unsupported_type;
  unsupported_type.input("x", {3}).output("d");
  attr_int(unsupported_type.node("Cast", {"x"}, {"d"}, "to_double"), "to", onnx::TensorProto::DOUBLE);
  Error e = import_error(unsupported_type);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'to_double' (Cast): casts to DOUBLE") != std::string::npos);
}

TEST_CASE("Identity and Dropout vanish; graph outputs keep their ONNX names") {
  OnnxBuilder b(12);
  b.input("x", {4}).output("out").output("passthrough");
  b.node("Relu", {"x"}, {"r"});
  b.node("Dropout", {"r"}, {"d"});
  b.node("Identity", {"d"}, {"out"});
  b.node("Identity", {"x"}, {"passthrough"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"relu", "identity"});
  CHECK(producer(g, "out").op == "relu");  // relu's output renamed to the graph output
  CHECK(producer(g, "passthrough").op == "identity");
  CHECK(producer(g, "passthrough").inputs == std::vector<std::string>{"x"});
  CHECK(g.outputs == std::vector<std::string>{"out", "passthrough"});
}

TEST_CASE("two graph outputs that are one tensor: the first takes its name, the second is an identity") {
  OnnxBuilder b(13);
  b.input("x", {2}).output("a").output("b");
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("Identity", {"s"}, {"a"});
  b.node("Identity", {"s"}, {"b"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"sigmoid", "identity"});
  CHECK(producer(g, "a").op == "sigmoid");
  CHECK(producer(g, "b").inputs == std::vector<std::string>{"a"});
  check_close(run_graph(g, {{0, 0}}, 1), {0.5f, 0.5f});
}

TEST_CASE("without the checker (opset newer than it knows), an undefined tensor is still an error") {
  OnnxBuilder b(18);
  b.input("x", {2}).output("y");
  b.node("Add", {"x", "ghost"}, {"y"});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("tensor 'ghost' is used before it is defined, or never defined") !=
        std::string::npos);
}

TEST_CASE("Dropout's mask output is all true; training mode is unsupported") {
  OnnxBuilder b(12);
  b.input("x", {2, 3}).output("y").output("mask", onnx::TensorProto::BOOL);
  b.node("Dropout", {"x"}, {"y", "mask"}, "drop");
  const Graph g = b.import();
  // Graph outputs that are a graph input (y) or a constant (the mask) get their ONNX names through
  // identity nodes.
  const auto producer = std::find_if(g.nodes.begin(), g.nodes.end(),
                                     [](const Node& n) { return n.outputs == std::vector<std::string>{"mask"}; });
  REQUIRE(producer != g.nodes.end());
  CHECK(producer->op == "identity");
  const TensorInfo& mask = g.tensor(producer->inputs.at(0));
  CHECK(mask.dtype == DType::boolean);
  CHECK(mask.shape == Shape{2, 3});
  REQUIRE(mask.is_constant());
  CHECK(onnx_import::read_ints(mask) == std::vector<int64_t>(6, 1));

  OnnxBuilder training(12);
  training.input("x", {4}).input("train", {}, onnx::TensorProto::BOOL).output("y");
  training.node("Dropout", {"x", "", "train"}, {"y"}, "drop");
  Error e = import_error(training);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("training_mode must be a constant false") != std::string::npos);
}

TEST_CASE("Constant: every value_* form becomes a constant tensor") {
  OnnxBuilder b(13);
  b.input("x", {2}).output("t").output("f").output("fs").output("i").output("is");
  attr_tensor_f32(b.node("Constant", {}, {"t"}), "value", {2}, {1.5f, 2.5f});
  attr_float(b.node("Constant", {}, {"f"}), "value_float", 0.25f);
  attr_floats(b.node("Constant", {}, {"fs"}), "value_floats", {1, 2, 3});
  attr_int(b.node("Constant", {}, {"i"}), "value_int", 7);
  attr_ints(b.node("Constant", {}, {"is"}), "value_ints", {4, 5});
  Graph g = b.import();
  CHECK(g.nodes.empty());
  CHECK(constant_values<float>(g, "t") == std::vector<float>{1.5f, 2.5f});
  CHECK(g.tensor("f").shape == Shape{});
  CHECK(constant_values<float>(g, "f") == std::vector<float>{0.25f});
  CHECK(constant_values<float>(g, "fs") == std::vector<float>{1, 2, 3});
  CHECK(g.tensor("i").dtype == DType::i64);
  CHECK(constant_values<int64_t>(g, "i") == std::vector<int64_t>{7});
  CHECK(constant_values<int64_t>(g, "is") == std::vector<int64_t>{4, 5});
}

TEST_CASE("PRelu and Gelu (opset 20)") {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 2}).output("y");
  b.init("slope", {2, 1}, {0.5f, 0.1f});
  b.node("PRelu", {"x", "slope"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"prelu"});
  check_close(run_graph(g, {{-2, 2, -10, 10}}), {-1, 2, -1, 10});

  OnnxBuilder gelu(20);  // newer than the installed checker: imported without it
  gelu.input("x", {3}).output("y");
  attr_string(gelu.node("Gelu", {"x"}, {"y"}), "approximate", "tanh");
  g = gelu.import();
  CHECK(ops_of(g) == std::vector<std::string>{"gelu"});
  CHECK(std::get<std::string>(g.nodes[0].attrs.at("approximate")) == "tanh");
}

TEST_CASE("trigonometric, hyperbolic and rounding functions map to their mt names and compute") {
  const std::vector<float> x{-0.75f, -0.5f, 0.25f, 0.5f};
  auto each = [&](float (*fn)(float)) {
    std::vector<float> y;
    for (float v : x) y.push_back(fn(v));
    return y;
  };
  struct Case {
    const char* onnx;
    const char* mt;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {"Cos", "cos", each([](float v) { return std::cos(v); })},
      {"Sin", "sin", each([](float v) { return std::sin(v); })},
      {"Tan", "tan", each([](float v) { return std::tan(v); })},
      {"Acos", "acos", each([](float v) { return std::acos(v); })},
      {"Asin", "asin", each([](float v) { return std::asin(v); })},
      {"Atan", "atan", each([](float v) { return std::atan(v); })},
      {"Cosh", "cosh", each([](float v) { return std::cosh(v); })},
      {"Sinh", "sinh", each([](float v) { return std::sinh(v); })},
      {"Asinh", "asinh", each([](float v) { return std::asinh(v); })},
      {"Atanh", "atanh", each([](float v) { return std::atanh(v); })},
      {"Softsign", "softsign", {-0.75f / 1.75f, -0.5f / 1.5f, 0.25f / 1.25f, 0.5f / 1.5f}},
      {"Sign", "sign", {-1, -1, 1, 1}},
      {"Round", "round", {-1, -0.0f, 0, 0}},  // halves to even: -0.5 -> -0, 0.5 -> 0
  };
  for (const auto& c : cases) {
    INFO(c.onnx);
    Graph g = unary_model(c.onnx, 13);
    REQUIRE(g.nodes.size() == 1);
    CHECK(g.nodes[0].op == c.mt);
    check_close(run_graph(g, {x}), c.expected, 1e-6);
  }
  Graph g = unary_model("Acosh", 13);
  CHECK(g.nodes[0].op == "acosh");
  check_close(run_graph(g, {{1, 2, 3, 10}}), {0, std::acosh(2.0f), std::acosh(3.0f), std::acosh(10.0f)}, 1e-6);
  g = unary_model("Round", 13);
  check_close(run_graph(g, {{1.5f, 2.5f, -2.5f, 2.4999998f}}), {2, 2, -2, 2});
}

TEST_CASE("Selu, Celu, ThresholdedRelu, Shrink: ONNX's defaults and given attributes") {
  Graph g = unary_model("Selu");
  CHECK(g.nodes[0].op == "selu");
  const double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
  check_close(run_graph(g, {{-1, 0, 1, 2}}), {static_cast<float>(gamma * alpha * std::expm1(-1.0)), 0,
                                              static_cast<float>(gamma), static_cast<float>(2 * gamma)});
  g = unary_model("Selu", 13, [](auto& n) {
    attr_float(n, "alpha", 2.0f);
    attr_float(n, "gamma", 3.0f);
  });
  check_close(run_graph(g, {{-1, 0, 1, 2}}), {static_cast<float>(6 * std::expm1(-1.0)), 0, 3, 6});
  g = unary_model("Celu", 13, [](auto& n) { attr_float(n, "alpha", 2.0f); });
  CHECK(g.nodes[0].op == "celu");
  check_close(run_graph(g, {{-2, 0, 1, 3}}), {static_cast<float>(2 * std::expm1(-1.0)), 0, 1, 3});
  g = unary_model("ThresholdedRelu");
  CHECK(g.nodes[0].op == "thresholded_relu");
  check_close(run_graph(g, {{0.5f, 1, 1.5f, -3}}), {0, 0, 1.5f, 0});
  g = unary_model("Shrink");
  CHECK(g.nodes[0].op == "shrink");
  check_close(run_graph(g, {{-1, -0.5f, 0.25f, 2}}), {-1, 0, 0, 2});  // lambd 0.5, bias 0
  g = unary_model("Shrink", 13, [](auto& n) {
    attr_float(n, "lambd", 1.5f);
    attr_float(n, "bias", 1.5f);
  });
  check_close(run_graph(g, {{-2, -1, 1, 2}}), {-0.5f, 0, 0, 0.5f});
}

TEST_CASE("Mod (ONNX's mixed-sign examples), BitShift, and the boolean ops evaluate on constants") {
  OnnxBuilder b(13);
  using onnx::TensorProto;
  b.input("x", {6}).output("floored", TensorProto::INT32).output("truncated", TensorProto::INT32).output("real");
  b.output("left", TensorProto::UINT8).output("right", TensorProto::UINT8).output("and", TensorProto::BOOL);
  b.output("xor", TensorProto::BOOL).output("not", TensorProto::BOOL).output("nan", TensorProto::BOOL).output("y");
  init_typed<int32_t>(b, "a", onnx::TensorProto::INT32, {6}, {-4, 7, 5, 4, -7, 8});
  init_typed<int32_t>(b, "b", onnx::TensorProto::INT32, {6}, {2, -3, 8, -2, 3, 5});
  b.node("Mod", {"a", "b"}, {"floored"});
  attr_int(b.node("Mod", {"a", "b"}, {"truncated"}), "fmod", 1);
  b.init("fa", {6}, {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f});
  b.init("fb", {6}, {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f});
  attr_int(b.node("Mod", {"fa", "fb"}, {"real"}), "fmod", 1);
  init_typed<uint8_t>(b, "bits", onnx::TensorProto::UINT8, {4}, {16, 4, 1, 255});
  init_typed<uint8_t>(b, "shift", onnx::TensorProto::UINT8, {4}, {1, 2, 3, 9});
  attr_string(b.node("BitShift", {"bits", "shift"}, {"left"}), "direction", "LEFT");
  attr_string(b.node("BitShift", {"bits", "shift"}, {"right"}), "direction", "RIGHT");
  init_typed<uint8_t>(b, "p", onnx::TensorProto::BOOL, {4}, {0, 0, 1, 1});
  init_typed<uint8_t>(b, "q", onnx::TensorProto::BOOL, {4}, {0, 1, 0, 1});
  b.node("And", {"p", "q"}, {"and"});
  b.node("Xor", {"p", "q"}, {"xor"});
  b.node("Not", {"p"}, {"not"});
  b.init("special", {3}, {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 1.0f});
  b.node("IsNaN", {"special"}, {"nan"});
  b.node("Relu", {"x"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"relu"});
  CHECK(constant_values<int32_t>(g, "floored") == std::vector<int32_t>{0, -2, 5, 0, 2, 3});
  CHECK(constant_values<int32_t>(g, "truncated") == std::vector<int32_t>{0, 1, 5, 0, -1, 3});
  check_close(constant_values<float>(g, "real"), {-0.1f, 0.4f, 5.0f, 0.1f, -0.4f, 3.0f});
  CHECK(constant_values<uint8_t>(g, "left") == std::vector<uint8_t>{32, 16, 8, 0});
  CHECK(constant_values<uint8_t>(g, "right") == std::vector<uint8_t>{8, 1, 0, 0});
  CHECK(constant_values<uint8_t>(g, "and") == std::vector<uint8_t>{0, 0, 0, 1});
  CHECK(constant_values<uint8_t>(g, "xor") == std::vector<uint8_t>{0, 1, 1, 0});
  CHECK(constant_values<uint8_t>(g, "not") == std::vector<uint8_t>{1, 1, 0, 0});
  CHECK(constant_values<uint8_t>(g, "nan") == std::vector<uint8_t>{1, 0, 0});
  CHECK(g.tensor("nan").dtype == DType::boolean);
}

TEST_CASE("CastLike casts to its second input's type; Pow of an integer base by a float exponent runs in float") {
  OnnxBuilder b(15);
  b.input("x", {3}).input("like", {1}, onnx::TensorProto::INT32).output("y", onnx::TensorProto::INT32);
  b.node("CastLike", {"x", "like"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"cast"});
  CHECK(g.tensor("y").dtype == DType::i32);

  OnnxBuilder p(15);
  p.input("base", {3}, onnx::TensorProto::INT64).output("y", onnx::TensorProto::INT64);
  p.init("e", {}, {0.5f});
  p.node("Pow", {"base", "e"}, {"y"});
  g = p.import();
  CHECK(ops_of(g) == std::vector<std::string>{"cast", "pow", "cast"});
  CHECK(g.tensor("y").dtype == DType::i64);
}

TEST_CASE("comparisons and Where on run-time tensors become logic ops") {
  OnnxBuilder b(16);
  b.input("x", {2, 3}).input("t", {3}).output("ge").output("le").output("w");
  b.node("GreaterOrEqual", {"x", "t"}, {"ge"});
  b.node("LessOrEqual", {"x", "t"}, {"le"});
  b.node("Where", {"ge", "x", "t"}, {"w"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"greater_or_equal", "less_or_equal", "where"});
  CHECK(g.tensor("ge").dtype == DType::boolean);
  CHECK(g.tensor("le").shape == Shape{2, 3});
  check_close(run_graph(g, {{1, 2, 3, 4, 5, 6}, {3, 3, 3}}, 2), {3, 3, 3, 4, 5, 6});
}

}  // namespace
}  // namespace mt::test
