// Matrix products, normalisation, softmax and reductions: Gemm in each of its forms, MatMul,
// BatchNormalization, LayerNormalization, Softmax before/after opset 13, Reduce* axes by opset.
#include <cmath>

#include "tests/unit/import/onnx_test_util.h"

namespace mt::test {
namespace {

// Y = alpha * A B + beta * C for row-major A [m,k], B [k,n], C broadcast from [n] or [m,n].
std::vector<float> gemm_reference(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c,
                                  int64_t m, int64_t k, int64_t n, float alpha, float beta) {
  std::vector<float> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(p * n + j)];
      const float bias = c.empty()                            ? 0.0f
                         : c.size() == static_cast<size_t>(n) ? c[static_cast<size_t>(j)]
                                                              : c[static_cast<size_t>(i * n + j)];
      y[static_cast<size_t>(i * n + j)] = alpha * sum + beta * bias;
    }
  return y;
}

std::vector<float> transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[static_cast<size_t>(j * rows + i)] = x[static_cast<size_t>(i * cols + j)];
  return t;
}

const std::vector<float> kA{1, -2, 3, 0.5f, 4, -1};                    // [2,3]
const std::vector<float> kB{1, 2, 3, 4, -1, 0, 2, 1, 0.5f, -2, 1, 3};  // [3,4]
const std::vector<float> kC{0.5f, -1, 2, 1};                           // [4]

TEST_CASE("Gemm with a constant B (transB=1), alpha and beta: linear with the scaled weight and bias") {
  OnnxBuilder b(13);
  b.input("a", {2, 3}).output("y");
  b.init("w", {4, 3}, transposed(kB, 3, 4));
  b.init("c", {4}, kC);
  auto& gemm = b.node("Gemm", {"a", "w", "c"}, {"y"}, "fc");
  attr_int(gemm, "transB", 1);
  attr_float(gemm, "alpha", 2.0f);
  attr_float(gemm, "beta", 0.5f);
  Graph g = b.import();
  REQUIRE(ops_of(g) == std::vector<std::string>{"linear"});
  CHECK(g.nodes[0].name == "fc");
  const Node& linear = g.nodes[0];
  CHECK(constant_values<float>(g, linear.inputs[1])[0] == 2.0f * kB[0]);
  check_close(run_graph(g, {kA}), gemm_reference(kA, kB, kC, 2, 3, 4, 2.0f, 0.5f), 1e-5);
}

TEST_CASE("Gemm with constant B (transB=0) and a [1,N] bias: weight transposed at import") {
  OnnxBuilder b(11);
  b.input("a", {2, 3}).output("y");
  b.init("w", {3, 4}, kB);
  b.init("c", {1, 4}, kC);
  b.node("Gemm", {"a", "w", "c"}, {"y"});
  Graph g = b.import();
  REQUIRE(ops_of(g) == std::vector<std::string>{"linear"});
  CHECK(g.tensor(g.nodes[0].inputs[1]).shape == Shape{4, 3});
  CHECK(g.tensor(g.nodes[0].inputs[2]).shape == Shape{4});
  check_close(run_graph(g, {kA}), gemm_reference(kA, kB, kC, 2, 3, 4, 1.0f, 1.0f), 1e-5);
}

TEST_CASE("Gemm with transA and a full [M,N] constant C: transpose, linear, add") {
  OnnxBuilder b(13);
  b.input("at", {3, 2}).output("y");
  b.init("w", {3, 4}, kB);
  std::vector<float> c_full{1, 2, 3, 4, 5, 6, 7, 8};
  b.init("c", {2, 4}, c_full);
  attr_int(b.node("Gemm", {"at", "w", "c"}, {"y"}), "transA", 1);
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"transpose", "linear", "add"});
  check_close(run_graph(g, {transposed(kA, 2, 3)}), gemm_reference(kA, kB, c_full, 2, 3, 4, 1.0f, 1.0f), 1e-5);
}

TEST_CASE("Gemm with a run-time B: matmul, mul by alpha, add beta * C") {
  OnnxBuilder b(13);
  b.input("a", {2, 3}).input("bt", {4, 3}).input("c", {2, 4}).output("y");
  auto& gemm = b.node("Gemm", {"a", "bt", "c"}, {"y"});
  attr_int(gemm, "transB", 1);
  attr_float(gemm, "alpha", 0.5f);
  attr_float(gemm, "beta", 2.0f);
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"mul", "transpose", "matmul", "mul", "add"});
  std::vector<float> c_full{1, 2, 3, 4, 5, 6, 7, 8};
  check_close(run_graph(g, {kA, transposed(kB, 3, 4), c_full}), gemm_reference(kA, kB, c_full, 2, 3, 4, 0.5f, 2.0f),
              1e-5);
}

TEST_CASE("MatMul maps to matmul with numpy semantics") {
  OnnxBuilder b(13);
  b.input("a", {2, 1, 2, 3}).output("y");
  b.init("w", {3, 4}, kB);
  b.node("MatMul", {"a", "w"}, {"y"});
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"matmul"});
  CHECK(g.tensor("y").shape == Shape{2, 1, 2, 4});
}

TEST_CASE("BatchNormalization and LayerNormalization") {
  OnnxBuilder b(15);
  b.input("x", {1, 2, 1, 2}).output("y");
  b.init("scale", {2}, {2, 1});
  b.init("bias", {2}, {1, 0});
  b.init("mean", {2}, {1, -1});
  b.init("var", {2}, {4, 1});
  attr_float(b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}), "epsilon", 0.0f);
  Graph g = b.import();
  CHECK(ops_of(g) == std::vector<std::string>{"batch_norm"});
  // channel 0: (x - 1) / 2 * 2 + 1; channel 1: (x + 1) / 1 * 1 + 0
  check_close(run_graph(g, {{3, 5, 0, 1}}), {3, 5, 1, 2}, 1e-5);

  OnnxBuilder ln(17);
  ln.input("x", {2, 4}).output("y");
  ln.init("gamma", {4}, {1, 1, 1, 1});
  auto& node = ln.node("LayerNormalization", {"x", "gamma"}, {"y"});
  attr_float(node, "epsilon", 1e-3f);
  g = ln.import();
  CHECK(ops_of(g) == std::vector<std::string>{"layer_norm"});
  CHECK(std::get<int64_t>(g.nodes[0].attrs.at("axis")) == -1);
  CHECK(std::get<double>(g.nodes[0].attrs.at("epsilon")) == doctest::Approx(1e-3));
}

TEST_CASE("BatchNormalization in training mode is unsupported") {
  OnnxBuilder b(15);
  b.input("x", {1, 1, 1, 1}).output("y");
  for (const char* name : {"s", "b", "m", "v"}) b.init(name, {1}, {1});
  attr_int(b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, "bn"), "training_mode", 1);
  Error e = import_error(b);
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()).find("node 'bn' (BatchNormalization): training_mode=1") != std::string::npos);
}

std::vector<float> softmax_of(std::vector<float> v) {
  float sum = 0;
  for (auto& x : v) sum += (x = std::exp(x));
  for (auto& x : v) x /= sum;
  return v;
}

TEST_CASE("Softmax before opset 13 normalises the flattened trailing dims, from 13 one axis") {
  const std::vector<float> x{1, 2, 3, 4, -1, 0, 1, 2};
  OnnxBuilder old(11);
  old.input("x", {2, 2, 2}).output("y");
  old.node("Softmax", {"x"}, {"y"});  // axis 1: rows of 4
  Graph g = old.import();
  CHECK(ops_of(g) == std::vector<std::string>{"flatten", "softmax", "reshape"});
  CHECK(g.tensor("y").shape == Shape{2, 2, 2});
  auto row0 = softmax_of({1, 2, 3, 4}), row1 = softmax_of({-1, 0, 1, 2});
  std::vector<float> expected(row0);
  expected.insert(expected.end(), row1.begin(), row1.end());
  check_close(run_graph(g, {x}), expected, 1e-6);

  OnnxBuilder last(11);
  last.input("x", {2, 2, 2}).output("y");
  attr_int(last.node("LogSoftmax", {"x"}, {"y"}), "axis", -1);
  g = last.import();
  CHECK(ops_of(g) == std::vector<std::string>{"log_softmax"});

  OnnxBuilder modern(13);
  modern.input("x", {2, 2, 2}).output("y");
  attr_int(modern.node("Softmax", {"x"}, {"y"}), "axis", 1);
  g = modern.import();
  CHECK(ops_of(g) == std::vector<std::string>{"softmax"});
  CHECK(std::get<int64_t>(g.nodes[0].attrs.at("axis")) == 1);
  auto pair = softmax_of({1, 3});
  CHECK(run_graph(g, {x})[0] == doctest::Approx(pair[0]).epsilon(1e-6));
}

TEST_CASE("Reduce axes: ReduceSum takes an input from 13, the others from 18; noop_with_empty_axes") {
  OnnxBuilder sum11(11);
  sum11.input("x", {2, 3}).output("y");
  auto& s = sum11.node("ReduceSum", {"x"}, {"y"});
  attr_ints(s, "axes", {1});
  attr_int(s, "keepdims", 0);
  Graph g = sum11.import();
  CHECK(ops_of(g) == std::vector<std::string>{"reduce_sum"});
  check_close(run_graph(g, {{1, 2, 3, 4, 5, 6}}), {6, 15});

  OnnxBuilder sum13(13);
  sum13.input("x", {2, 3}).output("y");
  sum13.init_i64("axes", {1}, {0});
  sum13.node("ReduceSum", {"x", "axes"}, {"y"});
  g = sum13.import();
  CHECK(g.tensor("y").shape == Shape{1, 3});
  check_close(run_graph(g, {{1, 2, 3, 4, 5, 6}}), {5, 7, 9});

  OnnxBuilder mean13(13);
  mean13.input("x", {2, 3}).output("y");
  attr_ints(mean13.node("ReduceMean", {"x"}, {"y"}), "axes", {-1});
  g = mean13.import();
  CHECK(std::get<std::vector<int64_t>>(g.nodes[0].attrs.at("axes")) == std::vector<int64_t>{-1});
  check_close(run_graph(g, {{1, 2, 3, 4, 5, 6}}), {2, 5});

  OnnxBuilder max18(18);
  max18.input("x", {2, 3}).output("y");
  max18.init_i64("axes", {1}, {0});
  attr_int(max18.node("ReduceMax", {"x", "axes"}, {"y"}), "keepdims", 0);
  g = max18.import();
  check_close(run_graph(g, {{1, 5, 3, 4, 2, 6}}), {4, 5, 6});

  OnnxBuilder noop(18);
  noop.input("x", {2, 3}).output("y");
  attr_int(noop.node("ReduceMin", {"x"}, {"y"}), "noop_with_empty_axes", 1);
  g = noop.import();
  CHECK(ops_of(g) == std::vector<std::string>{"identity"});
}

}  // namespace
}  // namespace mt::test
