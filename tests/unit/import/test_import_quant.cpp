// Pre-quantized ONNX: QuantizeLinear/DequantizeLinear become quantize/dequantize (uint8 shifted into
// int8), and the QDQ fold maps the patterns around conv, Gemm/MatMul, add, pooling and data movement onto
// int8 ops with the file's integers, or leaves an exact float32 op where it cannot.
#include <cmath>

#include "lib/ops/registry.h"
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

void scalar_params(OnnxBuilder& b, const std::string& prefix, float scale, int zero, int elem) {
  b.init(prefix + "_s", {}, {scale});
  if (elem == onnx::TensorProto::UINT8)
    init_typed<uint8_t>(b, prefix + "_z", elem, {}, {static_cast<uint8_t>(zero)});
  else
    init_typed<int8_t>(b, prefix + "_z", elem, {}, {static_cast<int8_t>(zero)});
}

// x -> Q -> DQ -> `name`_f (float): the activation pattern of QDQ graphs.
std::string qdq(OnnxBuilder& b, const std::string& x, const std::string& name, float scale, int zero, int elem) {
  scalar_params(b, name, scale, zero, elem);
  b.node("QuantizeLinear", {x, name + "_s", name + "_z"}, {name + "_q"});
  b.node("DequantizeLinear", {name + "_q", name + "_s", name + "_z"}, {name + "_f"});
  return name + "_f";
}

const Node& only_node(const Graph& g, const std::string& op) {
  const Node* found = nullptr;
  for (const auto& node : g.nodes)
    if (node.op == op) {
      REQUIRE(found == nullptr);
      found = &node;
    }
  REQUIRE(found != nullptr);
  return *found;
}

constexpr int kU8 = onnx::TensorProto::UINT8;
constexpr int kI8 = onnx::TensorProto::INT8;

// Conv with per-channel int8 weights, an int32 bias and a following relu, uint8 activations.
OnnxBuilder qdq_conv(int8_t weight_zero = 0) {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 4, 4}).output("y");
  const std::string x = qdq(b, "x", "in", 0.02f, 130, kU8);
  init_typed<int8_t>(b, "w_q", kI8, {3, 2, 1, 1}, {1, -2, 3, -4, 127, -128});
  b.init("w_s", {3}, {0.01f, 0.02f, 0.03f});
  init_typed<int8_t>(b, "w_z", kI8, {3}, {0, weight_zero, 0});
  attr_int(b.node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"w"}), "axis", 0);
  init_typed<int32_t>(b, "b_q", onnx::TensorProto::INT32, {3}, {100, -200, 300});
  b.init("b_s", {3}, {0.02f * 0.01f, 0.02f * 0.02f, 0.02f * 0.03f});
  init_typed<int32_t>(b, "b_z", onnx::TensorProto::INT32, {3}, {0, 0, 0});
  attr_int(b.node("DequantizeLinear", {"b_q", "b_s", "b_z"}, {"b"}), "axis", 0);
  b.node("Conv", {x, "w", "b"}, {"conv"}, "conv");
  b.node("Relu", {"conv"}, {"relu"});
  qdq(b, "relu", "out", 0.05f, 0, kU8);
  b.node("Identity", {"out_f"}, {"y"});
  return b;
}

TEST_CASE("QDQ conv: an int8 conv2d with the file's weights, bias and scales; relu is its clamp; uint8 shifted") {
  const Graph g = qdq_conv().import();
  CHECK(ops_of(g) == std::vector<std::string>{"quantize", "conv2d", "dequantize"});
  const Node& conv = only_node(g, "conv2d");
  const TensorInfo& x = g.tensor(conv.inputs[0]);
  CHECK(x.dtype == DType::i8);
  CHECK(x.quant->scales == std::vector<float>{0.02f});
  CHECK(x.quant->zero_points == std::vector<int32_t>{2});  // 130 - 128
  CHECK(constant_values<int8_t>(g, conv.inputs[1]) == std::vector<int8_t>{1, -2, 3, -4, 127, -128});
  CHECK(g.tensor(conv.inputs[1]).quant->axis == 0);
  CHECK(g.tensor(conv.inputs[1]).quant->scales == std::vector<float>{0.01f, 0.02f, 0.03f});
  CHECK(constant_values<int32_t>(g, conv.inputs[2]) == std::vector<int32_t>{100, -200, 300});
  CHECK(mt::attr_float(conv, "act_min") == 0.0);
  CHECK(g.tensor(conv.outputs[0]).quant->zero_points == std::vector<int32_t>{-128});

  // Against the float32 arithmetic QDQ prescribes, computed here.
  std::vector<float> input(32);
  for (size_t i = 0; i < input.size(); ++i) input[i] = -2.0f + 0.15f * static_cast<float>(i);
  const std::vector<float> got = run_graph(g, {input});
  auto q = [](float v, float s, int z) { return std::clamp(std::nearbyint(v / s) + z, 0.0f, 255.0f); };
  const int8_t w[3][2] = {{1, -2}, {3, -4}, {127, -128}};
  const float ws[3] = {0.01f, 0.02f, 0.03f};
  const int32_t bias[3] = {100, -200, 300};
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 16; ++p) {
      float acc = static_cast<float>(bias[c]) * 0.02f * ws[c];
      for (int k = 0; k < 2; ++k)
        acc += (q(input[static_cast<size_t>(k * 16 + p)], 0.02f, 130) - 130) * 0.02f * w[c][k] * ws[c];
      const float expected = q(std::max(acc, 0.0f), 0.05f, 0) * 0.05f;
      INFO("channel ", c, " pixel ", p);
      CHECK(std::abs(got[static_cast<size_t>(c * 16 + p)] - expected) <= 0.05f + 1e-6f);
    }
}

TEST_CASE("QDQ conv: weights with a nonzero zero point stay an exact float32 conv") {
  const Graph g = qdq_conv(5).import();
  const Node& conv = only_node(g, "conv2d");
  CHECK(g.tensor(conv.inputs[0]).dtype == DType::f32);
  CHECK(producer(g, conv.inputs[0]).op == "dequantize");
  // (q - zero) * scale, as ONNX defines it.
  const auto w = constant_values<float>(g, conv.inputs[1]);
  CHECK(w[2] == (3.0f - 5.0f) * 0.02f);
  CHECK(w[0] == 1.0f * 0.01f);
}

TEST_CASE("QDQ MatMul: per-column int8 weights become a linear with transposed per-row weights") {
  OnnxBuilder b(13);
  b.input("x", {2, 3}).output("y");
  const std::string x = qdq(b, "x", "in", 0.1f, 0, kI8);
  init_typed<int8_t>(b, "w_q", kI8, {3, 2}, {1, 2, 3, 4, 5, 6});
  b.init("w_s", {2}, {0.5f, 0.25f});
  init_typed<int8_t>(b, "w_z", kI8, {2}, {0, 0});
  b.node("DequantizeLinear", {"w_q", "w_s", "w_z"}, {"w"});  // axis 1 by default
  b.node("MatMul", {x, "w"}, {"mm"}, "mm");
  qdq(b, "mm", "out", 0.2f, -1, kI8);
  b.node("Identity", {"out_f"}, {"y"});
  const Graph g = b.import();
  const Node& linear = only_node(g, "linear");
  CHECK(constant_values<int8_t>(g, linear.inputs[1]) == std::vector<int8_t>{1, 3, 5, 2, 4, 6});
  CHECK(g.tensor(linear.inputs[1]).quant->axis == 0);
  CHECK(g.tensor(linear.inputs[1]).quant->scales == std::vector<float>{0.5f, 0.25f});
  // Row 0: x quantizes to (10, 5, -3) at 0.1, so y = (0.5, 0.55) before quantization at 0.2 with zero point -1:
  // 0.4 or 0.6 (0.5 is a tie), and 0.6.
  const std::vector<float> got = run_graph(g, {{1.0f, 0.5f, -0.3f, 0.2f, 0.0f, 1.1f}});
  CHECK(std::abs(got[0] - 0.5f) <= 0.1f + 1e-6f);
  CHECK(std::abs(got[1] - 0.6f) <= 1e-6f);
}

TEST_CASE("QDQ: data movement and pooling with equal parameters move int8; different ones stay float32") {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 4, 4}).output("y");
  const std::string x = qdq(b, "x", "in", 0.05f, 128, kU8);
  attr_ints(b.node("MaxPool", {x}, {"pool"}, "pool"), "kernel_shape", {2, 2});
  const std::string p = qdq(b, "pool", "pooled", 0.05f, 128, kU8);  // the same parameters
  b.node("Flatten", {p}, {"flat"}, "flat");
  const std::string f = qdq(b, "flat", "other", 0.1f, 128, kU8);  // other parameters
  b.node("Identity", {f}, {"y"});
  const Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"quantize", "max_pool2d", "dequantize", "flatten", "quantize",
                                              "dequantize"});
  CHECK(g.tensor(only_node(g, "max_pool2d").inputs[0]).dtype == DType::i8);
  CHECK(g.tensor(only_node(g, "flatten").inputs[0]).dtype == DType::f32);
}

TEST_CASE("QDQ: x * HardSigmoid(x) (PyTorch's hardswish) is int8 hardswish; Add then Relu is int8 add with a clamp") {
  OnnxBuilder b(13);
  b.input("x", {1, 2, 3, 3}).output("y");
  const std::string x = qdq(b, "x", "in", 0.05f, 128, kU8);
  auto& hs = b.node("HardSigmoid", {x}, {"hs"}, "hs");
  attr_float(hs, "alpha", 1.0f / 6.0f);
  b.node("Mul", {x, "hs"}, {"hswish"}, "hswish");
  const std::string h = qdq(b, "hswish", "h", 0.04f, 10, kU8);
  b.node("Add", {h, x}, {"sum"}, "add");
  b.node("Relu", {"sum"}, {"relu"});
  const std::string r = qdq(b, "relu", "r", 0.06f, 0, kU8);
  // A requantization to the same parameters disappears.
  const std::string again = qdq(b, r, "again", 0.06f, 0, kU8);
  b.node("Identity", {again}, {"y"});
  const Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"quantize", "hardswish", "add", "dequantize"});
  CHECK(mt::attr_float(only_node(g, "add"), "act_min") == 0.0);
  std::vector<float> input(18);
  for (size_t i = 0; i < input.size(); ++i) input[i] = -4.0f + 0.5f * static_cast<float>(i);
  const std::vector<float> got = run_graph(g, {input});
  auto fake_quant = [](float v, float s, int z) {
    return (std::clamp(std::nearbyint(v / s) + z, 0.0f, 255.0f) - static_cast<float>(z)) * s;
  };
  for (size_t i = 0; i < input.size(); ++i) {
    const float xq = fake_quant(input[i], 0.05f, 128);
    const float hq = fake_quant(xq * std::clamp(xq / 6.0f + 0.5f, 0.0f, 1.0f), 0.04f, 10);
    INFO("element ", i);
    CHECK(std::abs(got[i] - fake_quant(std::max(hq + xq, 0.0f), 0.06f, 0)) <= 0.06f + 1e-6f);
  }
}

TEST_CASE("QLinearConv: an int8 conv2d with the file's weights and bias") {
  OnnxBuilder b(13);
  b.input("x", {1, 1, 3, 3}).output("y");
  scalar_params(b, "in", 0.1f, 128, kU8);
  b.node("QuantizeLinear", {"x", "in_s", "in_z"}, {"xq"});
  init_typed<int8_t>(b, "w", kI8, {2, 1, 1, 1}, {3, -5});
  b.init("w_s", {2}, {0.5f, 0.25f});
  init_typed<int8_t>(b, "w_z", kI8, {2}, {0, 0});
  scalar_params(b, "out", 0.2f, 100, kU8);
  init_typed<int32_t>(b, "bias", onnx::TensorProto::INT32, {2}, {7, -9});
  b.node("QLinearConv", {"xq", "in_s", "in_z", "w", "w_s", "w_z", "out_s", "out_z", "bias"}, {"yq"}, "qconv");
  b.node("DequantizeLinear", {"yq", "out_s", "out_z"}, {"y"});
  const Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"quantize", "conv2d", "dequantize"});
  const Node& conv = only_node(g, "conv2d");
  CHECK(constant_values<int8_t>(g, conv.inputs[1]) == std::vector<int8_t>{3, -5});
  CHECK(constant_values<int32_t>(g, conv.inputs[2]) == std::vector<int32_t>{7, -9});
  CHECK(g.tensor(conv.outputs[0]).quant->zero_points == std::vector<int32_t>{-28});
}

TEST_CASE("QDQ: an unpaired QuantizeLinear/DequantizeLinear stays quantize/dequantize, exact for uint8") {
  OnnxBuilder b(13);
  b.input("x", {5}).output("y");
  qdq(b, "x", "in", 0.5f, 200, kU8);
  b.node("Identity", {"in_f"}, {"y"});
  const Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"quantize", "dequantize"});
  const std::vector<float> got = run_graph(g, {{-200.0f, -1.25f, 0.0f, 27.7f, 500.0f}});
  // clamp(round(x / 0.5) + 200, 0, 255) - 200, times 0.5.
  check_close(got, {-100.0f, -1.0f, 0.0f, 27.5f, 27.5f}, 0.0);
}

TEST_CASE("QDQ: what mt cannot represent is refused, naming the node") {
  OnnxBuilder b(13);
  b.input("x", {1, 2}).output("y");
  scalar_params(b, "in", 0.5f, 3, kU8);
  b.node("QuantizeLinear", {"x", "in_s", "in_z"}, {"q"});
  attr_int(b.node("Cast", {"q"}, {"c"}, "cast"), "to", onnx::TensorProto::FLOAT);
  b.node("Identity", {"c"}, {"y"});
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'cast' (Cast): casts a quantized uint8 tensor") != std::string::npos);

  // A uint8 graph output reached through another node (a direct one is exact: see below).
  OnnxBuilder uint8_output(13);
  uint8_output.input("x", {1, 2}).output("y", kU8);
  scalar_params(uint8_output, "in", 0.5f, 3, kU8);
  uint8_output.node("QuantizeLinear", {"x", "in_s", "in_z"}, {"q"});
  uint8_output.node("Identity", {"q"}, {"y"});
  e = import_error(uint8_output);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("graph output 'y' is a quantized uint8 tensor") != std::string::npos);

  // ONNX's Add of two uint8 tensors is integer arithmetic, not a quantized add.
  OnnxBuilder integer_add(13);
  integer_add.input("x", {1, 2}).output("y");
  scalar_params(integer_add, "in", 0.5f, 3, kU8);
  integer_add.node("QuantizeLinear", {"x", "in_s", "in_z"}, {"q"});
  integer_add.node("Add", {"q", "q"}, {"sum"}, "integer_add");
  integer_add.node("DequantizeLinear", {"sum", "in_s", "in_z"}, {"y"});
  e = import_error(integer_add);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'integer_add' (add) computes on 'q', a quantized integer tensor") !=
        std::string::npos);

  OnnxBuilder zero_scale(13);
  zero_scale.input("x", {1, 2}).output("y");
  scalar_params(zero_scale, "in", 0.0f, 0, kI8);
  zero_scale.node("QuantizeLinear", {"x", "in_s", "in_z"}, {"y"}, "q");
  CHECK(import_error(zero_scale).code() == ExitCode::invalid_input);
}

// Runs `graph` on the reference backend with the given input bytes; output `index`'s bytes as T.
template <typename T>
std::vector<T> run_typed(const Graph& graph, const std::vector<const void*>& inputs, size_t index = 0) {
  auto plan = make_reference_backend()->plan(graph, {});
  for (size_t i = 0; i < inputs.size(); ++i) plan->bind_input(i, inputs[i]);
  plan->run();
  const TensorInfo& out = graph.tensor(graph.outputs[index]);
  REQUIRE(dtype_size(out.dtype) == sizeof(T));
  const auto* data = static_cast<const T*>(plan->output_data(index));
  return {data, data + out.numel()};
}

TEST_CASE("QDQ: run-time parameters, per-axis ones and uint8 outputs compute ONNX's values in float32 ops") {
  // QuantizeLinear per axis 1 of a run-time tensor, straight to a uint8 graph output.
  OnnxBuilder per_axis(13);
  per_axis.input("x", {2, 3}).output("y", kU8);
  per_axis.init("s", {3}, {0.5f, 0.25f, 2.0f});
  init_typed<uint8_t>(per_axis, "z", kU8, {3}, {0, 128, 250});
  per_axis.node("QuantizeLinear", {"x", "s", "z"}, {"y"}, "q");
  const Graph g = per_axis.import();
  CHECK(g.tensor("y").dtype == DType::u8);
  const std::vector<float> x = {-1.0f, 0.375f, 9.0f, 200.0f, -40.0f, 3.0f};
  // clamp(round_half_even(x / s) + z, 0, 255): -2 -> 0; 1.5 -> 2 + 128; 4.5 -> 4 + 250 -> 254; 400 -> 255;
  // -160 + 128; 1.5 -> 2 + 250.
  CHECK(run_typed<uint8_t>(g, {x.data()}) == std::vector<uint8_t>{0, 130, 254, 255, 0, 252});

  // DequantizeLinear of a uint8 graph input with run-time scale and zero point, per axis 0.
  OnnxBuilder runtime(13);
  runtime.input("q", {2, 2}, kU8).input("s", {2}).input("z", {2}, kU8).output("y");
  attr_int(runtime.node("DequantizeLinear", {"q", "s", "z"}, {"y"}, "dq"), "axis", 0);
  const Graph d = runtime.import();
  const uint8_t q[4] = {0, 255, 7, 9};
  const float scales[2] = {0.5f, 3.0f};
  const uint8_t zeros[2] = {128, 7};
  CHECK(run_typed<float>(d, {q, scales, zeros}) == std::vector<float>{-64.0f, 63.5f, 0.0f, 6.0f});
}

}  // namespace
}  // namespace mt::test
