// ConvInteger and MatMulInteger: float32 ops on the integers minus their zero points, cast to int32
// (translate_integer.cpp), checked against the integer arithmetic ONNX defines, computed here;
// DynamicQuantizeLinear in float32; the zero points mt cannot take are refused, naming the node.
#include <cmath>

#include "lib/ops/registry.h"
#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

constexpr int kU8 = onnx::TensorProto::UINT8;
constexpr int kI8 = onnx::TensorProto::INT8;

// x (float32) -> QuantizeLinear(scale, zero: uint8) -> the returned integer tensor.
std::string quantize(OnnxBuilder& b, const std::string& x, float scale, uint8_t zero) {
  b.init(x + "_s", {}, {scale});
  init_typed<uint8_t>(b, x + "_z", kU8, {}, {zero});
  b.node("QuantizeLinear", {x, x + "_s", x + "_z"}, {x + "_q"});
  return x + "_q";
}

// The int32 result `y` as float32 graph output "out".
void cast_to_float(OnnxBuilder& b, const std::string& y) {
  attr_int(b.node("Cast", {y}, {"out"}), "to", onnx::TensorProto::FLOAT);
}

float quantized(float v, float scale, int zero) { return std::clamp(std::nearbyint(v / scale) + zero, 0.0f, 255.0f); }

TEST_CASE("ConvInteger: uint8 x quantized in the graph, uint8 weights with a zero point per output channel") {
  OnnxBuilder b(10);
  b.input("x", {1, 2, 3, 3}).output("out");
  const std::string xq = quantize(b, "x", 0.1f, 120);
  const std::vector<uint8_t> w = {0, 255, 7, 130, 200, 3, 90, 128};  // [2, 2, 1, 2]
  init_typed<uint8_t>(b, "w", kU8, {2, 2, 1, 2}, w);
  init_typed<uint8_t>(b, "x_zero", kU8, {}, {120});
  init_typed<uint8_t>(b, "w_zero", kU8, {2}, {128, 100});
  attr_ints(b.node("ConvInteger", {xq, "w", "x_zero", "w_zero"}, {"y"}, "conv"), "pads", {0, 1, 0, 0});
  cast_to_float(b, "y");
  const Graph g = b.import();

  std::vector<float> input(18);
  for (size_t i = 0; i < input.size(); ++i) input[i] = -14.0f + 1.7f * static_cast<float>(i);  // saturates both ways
  const std::vector<float> got = run_graph(g, {input});
  // Output 2 x 3 x 3 (one column of padding on the left): sum (x - 120) * (w - zero[m]), x's padding 120.
  std::vector<float> expected;
  const int w_zero[2] = {128, 100};
  for (int m = 0; m < 2; ++m)
    for (int oy = 0; oy < 3; ++oy)
      for (int ox = 0; ox < 3; ++ox) {
        int64_t acc = 0;
        for (int c = 0; c < 2; ++c)
          for (int kx = 0; kx < 2; ++kx) {
            const int ix = ox - 1 + kx;
            if (ix < 0 || ix >= 3) continue;
            const float q = quantized(input[static_cast<size_t>((c * 3 + oy) * 3 + ix)], 0.1f, 120);
            acc += (static_cast<int64_t>(q) - 120) * (w[static_cast<size_t>((m * 2 + c) * 2 + kx)] - w_zero[m]);
          }
        expected.push_back(static_cast<float>(acc));
      }
  check_close(got, expected, 0.0);
  CHECK(g.tensor(producer(g, "out").inputs[0]).dtype == DType::i32);
}

TEST_CASE("MatMulInteger: int8 graph inputs, zero points per tensor and per column of b") {
  OnnxBuilder b(10);
  b.input("a", {2, 3}, kI8).output("out");
  init_typed<int8_t>(b, "b", kI8, {3, 2}, {-128, 127, 5, -6, 0, 100});
  init_typed<int8_t>(b, "a_zero", kI8, {}, {-3});
  init_typed<int8_t>(b, "b_zero", kI8, {2}, {2, -1});
  b.node("MatMulInteger", {"a", "b", "a_zero", "b_zero"}, {"y"});
  cast_to_float(b, "y");
  const Graph g = b.import();
  CHECK(g.tensor(g.inputs[0]).dtype == DType::i8);
  auto backend = make_reference_backend();
  auto plan = backend->plan(g, {});
  const std::vector<int8_t> a = {-128, 127, 0, 9, -7, 3};
  plan->bind_input(0, a.data());
  plan->run();
  const auto* got = static_cast<const float*>(plan->output_data(0));
  const int bq[3][2] = {{-128, 127}, {5, -6}, {0, 100}};
  const int b_zero[2] = {2, -1};
  for (int r = 0; r < 2; ++r)
    for (int n = 0; n < 2; ++n) {
      int acc = 0;
      for (int k = 0; k < 3; ++k) acc += (a[static_cast<size_t>(r * 3 + k)] + 3) * (bq[k][n] - b_zero[n]);
      INFO("row ", r, " column ", n);
      CHECK(got[r * 2 + n] == static_cast<float>(acc));
    }
}

// ONNX's DynamicQuantizeLinear for uint8, computed here as ONNX Runtime computes it.
struct Dynamic {
  float scale;
  int zero;
  std::vector<int> q;
};
Dynamic dynamic_quantize(const std::vector<float>& x) {
  float lo = 0.0f, hi = 0.0f;
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  Dynamic d{.scale = hi == lo ? 1.0f : (hi - lo) / 255.0f};
  d.zero = static_cast<int>(std::nearbyint(std::clamp(0.0f - lo / d.scale, 0.0f, 255.0f)));
  for (float v : x) d.q.push_back(static_cast<int>(std::clamp(std::nearbyint(v / d.scale) + d.zero, 0.0f, 255.0f)));
  return d;
}

TEST_CASE("DynamicQuantizeLinear then MatMulInteger, Cast and Mul by the scales, as quantize_dynamic writes them") {
  OnnxBuilder b(11);
  b.input("x", {2, 3}).output("out");
  b.node("DynamicQuantizeLinear", {"x"}, {"xq", "x_scale", "x_zero"});
  const std::vector<int8_t> w = {-100, 7, 127, -128, 0, 55};  // [3, 2]
  init_typed<int8_t>(b, "w", kI8, {3, 2}, w);
  init_typed<int8_t>(b, "w_zero", kI8, {}, {0});
  b.init("w_scale", {}, {0.01f});
  b.node("MatMulInteger", {"xq", "w", "x_zero", "w_zero"}, {"y"});
  attr_int(b.node("Cast", {"y"}, {"yf"}), "to", onnx::TensorProto::FLOAT);
  b.node("Mul", {"x_scale", "w_scale"}, {"scale"});
  b.node("Mul", {"yf", "scale"}, {"out"});
  const Graph g = b.import();
  for (const auto& node : g.nodes) CHECK(node.op != "quantize");

  for (const std::vector<float>& x : {std::vector<float>{-1.0f, 0.5f, 2.0f, 0.25f, -0.75f, 1.5f},
                                      std::vector<float>{0.3f, 0.1f, 0.2f, 0.9f, 0.4f, 0.7f},  // all positive
                                      std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f}}) {  // scale 1
    const Dynamic d = dynamic_quantize(x);
    const std::vector<float> got = run_graph(g, {x});
    std::vector<float> expected;
    for (int r = 0; r < 2; ++r)
      for (int n = 0; n < 2; ++n) {
        int acc = 0;
        for (int k = 0; k < 3; ++k) acc += (d.q[static_cast<size_t>(r * 3 + k)] - d.zero) * w[static_cast<size_t>(k * 2 + n)];
        expected.push_back(static_cast<float>(acc) * (d.scale * 0.01f));
      }
    check_close(got, expected, 0.0);
  }
}

TEST_CASE("integer ops: per-row zero points and mismatched types are refused, naming the node") {
  OnnxBuilder per_row(10);
  per_row.input("a", {2, 3}, kU8).output("out");
  init_typed<uint8_t>(per_row, "b", kU8, {3, 1}, {1, 2, 3});
  init_typed<uint8_t>(per_row, "a_zero", kU8, {2}, {1, 2});
  per_row.node("MatMulInteger", {"a", "b", "a_zero"}, {"y"}, "mm");
  cast_to_float(per_row, "y");
  Error e = import_error(per_row);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'mm' (MatMulInteger): zero point 'a_zero' has 2 values") !=
        std::string::npos);

  OnnxBuilder wrong_type(10);
  wrong_type.input("a", {2, 3}, kU8).output("out");
  init_typed<int8_t>(wrong_type, "b", kI8, {3, 1}, {1, 2, 3});
  init_typed<uint8_t>(wrong_type, "b_zero", kU8, {}, {1});
  wrong_type.node("MatMulInteger", {"a", "b", "", "b_zero"}, {"y"}, "mm");
  cast_to_float(wrong_type, "y");
  e = import_error(wrong_type);
  CHECK(e.code() == ExitCode::invalid_input);
  CHECK(std::string(e.what()).find("zero point 'b_zero' is uint8, its operand 'b' int8") != std::string::npos);
}

}  // namespace
}  // namespace mt::test
