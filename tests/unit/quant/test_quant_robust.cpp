// Trained weights' edge cases, hand-built: dead and denormal weight channels, an activation range
// that collapsed to one value, a constant channel, huge outliers, scale ratios outside what the cpu
// kernels take. Each quantized graph must pass the cpu backend's checks and plan, and its outputs
// (reference and cpu) must match fp32 within the stated number of output steps.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "lib/core/error.h"
#include "lib/ops/int8_limits.h"
#include "lib/quant/quant_params.h"
#include "lib/quant/quantize_model.h"
#include "lib/runtime/backend_registry.h"
#include "lib/runtime/run_once.h"

namespace mt::quant {
namespace {

using Ranges = std::map<std::string, Range, std::less<>>;

HostArray array_of(const std::vector<float>& values, Shape shape) {
  return {DType::f32, std::move(shape), ConstData::copy_of(values.data(), values.size() * sizeof(float))};
}

// x[1, in, 4, 4] -> conv2d 1x1 (weights [out, in], bias) -> y
Graph conv_graph(const std::vector<float>& w, int64_t out, int64_t in, const std::vector<float>& bias) {
  Graph g;
  g.add_tensor({.name = "x", .shape = {1, in, 4, 4}});
  g.inputs = {"x"};
  g.add_tensor({.name = "w", .shape = {out, in, 1, 1}, .data = ConstData::copy_of(w.data(), w.size() * 4)});
  g.add_tensor({.name = "b", .shape = {out}, .data = ConstData::copy_of(bias.data(), bias.size() * 4)});
  g.add_tensor({.name = "y"});
  g.nodes = {{"conv", "conv2d", {"x", "w", "b"}, {"y"}, {}}};
  g.outputs = {"y"};
  g.infer_shapes();
  g.validate();
  return g;
}

std::vector<float> uniform(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> run(const char* backend, const Graph& graph, const HostArray& input) {
  const Backend* b = find_backend(backend);
  REQUIRE(b != nullptr);
  const RunResult result = run_once(*b, graph, PlanOptions{}, {input});
  const HostArray& y = result.outputs.at(0);
  return {y.as<float>(), y.as<float>() + y.numel()};
}

// The cpu backend accepts every node of `graph` and plans it.
void require_cpu_runs(const Graph& graph) {
  const Backend* cpu = find_backend("cpu");
  REQUIRE(cpu != nullptr);
  for (const auto& refused : check_graph(*cpu, graph)) FAIL_CHECK("cpu refuses " << refused.node << ": " << refused.reason);
  CHECK_NOTHROW(cpu->plan(graph, PlanOptions{}));
}

const Node& node_named(const Graph& graph, const std::string& name) {
  for (const auto& node : graph.nodes)
    if (node.name == name) return node;
  FAIL("no node " << name);
  throw;
}

double multiplier(const Graph& q, const Node& conv, size_t channel) {
  return static_cast<double>(q.tensor(conv.inputs[0]).quant->scales[0]) * q.tensor(conv.inputs[1]).quant->scales[channel] /
         q.tensor(conv.outputs[0]).quant->scales[0];
}

// int8 outputs on reference and cpu against fp32, within `steps` output scales.
void check_outputs(const Graph& fp32, const Graph& q, const HostArray& input, double steps) {
  const auto expected = run("reference", fp32, input);
  const float y_scale = q.tensor(node_named(q, "conv").outputs[0]).quant->scales[0];
  for (const char* backend : {"reference", "cpu"}) {
    const auto got = run(backend, q, input);
    REQUIRE(got.size() == expected.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
    INFO(backend << ": worst error " << worst << " at output scale " << y_scale);
    CHECK(worst <= steps * y_scale);
  }
}

}  // namespace

TEST_CASE("dead and denormal weight channels get a floored scale and zero weights; cpu runs the conv") {
  // Channel 0 ordinary, 1 all zero, 2 denormal (what underflowed to 2.5e-41 scales in a trained
  // model), 3 tiny but normal with a bias that alone decides its output.
  const int64_t in = 8;
  std::vector<float> w = uniform(static_cast<size_t>(in), -0.5f, 0.5f, 1);
  for (int64_t i = 0; i < in; ++i) w.push_back(0.0f);
  for (int64_t i = 0; i < in; ++i) w.push_back(i % 2 ? 3e-41f : -1e-42f);
  for (int64_t i = 0; i < in; ++i) w.push_back(1e-25f);
  const Graph fp32 = conv_graph(w, 4, in, {0.1f, 0.0f, -0.2f, 0.25f});
  const Ranges ranges = {{"x", {-1.0f, 1.0f}}, {"y", {-2.0f, 2.0f}}};

  // Without floors the denormal channel's scale is itself denormal: a multiplier XNNPACK refuses.
  const QuantizedWeights unfloored = quantize_weights(w, 4);
  CHECK(double(unfloored.params.scales[2]) * (2.0 / 255) / (4.0 / 255) < int8_limits::kRequantization.min);

  const QuantizeResult q = quantize_graph(fp32, ranges, {});
  const Node& conv = node_named(q.graph, "conv");
  const TensorInfo& qw = q.graph.tensor(conv.inputs[1]);
  for (size_t c = 1; c < 4; ++c) {
    CHECK(std::isnormal(qw.quant->scales[c]));
    CHECK(multiplier(q.graph, conv, c) >= 2 * int8_limits::kRequantization.min);
    for (int64_t i = 0; i < in; ++i) CHECK(qw.data.as<int8_t>()[c * in + i] == 0);
  }
  // The bias still fits int32 (it would saturate at the unfloored scale).
  const TensorInfo& qb = q.graph.tensor(conv.inputs[2]);
  CHECK(double(qb.data.as<int32_t>()[3]) * qb.quant->scales[3] == doctest::Approx(0.25).epsilon(1e-6));
  require_cpu_runs(q.graph);
  check_outputs(fp32, q.graph, array_of(uniform(in * 16, -1.0f, 1.0f, 2), {1, in, 4, 4}), 1.5);
}

TEST_CASE("an activation range that collapsed to one value: constant input and constant output") {
  SUBCASE("constant output channel: zero weights, bias 0.7, output range [0.7, 0.7]") {
    const Graph fp32 = conv_graph(std::vector<float>(8, 0.0f), 2, 4, {0.7f, 0.7f});
    const QuantizeResult q = quantize_graph(fp32, {{"x", {0.0f, 0.0f}}, {"y", {0.7f, 0.7f}}}, {});
    require_cpu_runs(q.graph);
    check_outputs(fp32, q.graph, array_of(std::vector<float>(64, 0.0f), {1, 4, 4, 4}), 0.5);
  }
  SUBCASE("output range [0, 0] behind ordinary weights: the output scale is widened into the kernel's bounds") {
    const Graph fp32 = conv_graph(uniform(8, -1.0f, 1.0f, 3), 2, 4, {0.0f, 0.0f});
    // Unwidened, the output scale would be kMinActivationScale: multiplier (2/255)(1/127)/1e-8 > 256.
    CHECK((2.0 / 255) * (1.0 / 127) / kMinActivationScale >= int8_limits::kRequantization.max);
    const QuantizeResult q = quantize_graph(fp32, {{"x", {-1.0f, 1.0f}}, {"y", {0.0f, 0.0f}}}, {});
    const Node& conv = node_named(q.graph, "conv");
    for (size_t c = 0; c < 2; ++c) CHECK(multiplier(q.graph, conv, c) < int8_limits::kRequantization.max / 2);
    require_cpu_runs(q.graph);
    // Zero input: the output the range saw, exact.
    check_outputs(fp32, q.graph, array_of(std::vector<float>(64, 0.0f), {1, 4, 4, 4}), 0.0);
  }
}

TEST_CASE("a constant weight channel quantizes exactly; a huge outlier takes the channel's scale") {
  std::vector<float> w(16, 0.3f);                       // channel 0: constant
  for (int i = 0; i < 8; ++i) w[8 + i] = 0.01f * (i - 4);  // channel 1: small weights and one outlier
  w[15] = 1e4f;
  const QuantizedWeights q = quantize_weights(w, 2, std::vector<float>(2, std::numeric_limits<float>::min()));
  for (int i = 0; i < 8; ++i) CHECK(q.values[i] == 127);
  CHECK(q.values[0] * q.params.scales[0] == doctest::Approx(0.3f));
  CHECK(q.params.scales[1] == doctest::Approx(1e4f / 127));
  CHECK(q.values[15] == 127);
  for (int i = 8; i < 15; ++i) CHECK(q.values[i] == 0);  // below half a step of 79: what per-channel int8 can do

  // An activation outlier near the float limit still gives a finite scale (computed in double).
  const QuantParams wide = activation_params(-3e38f, 3e38f);
  CHECK(std::isfinite(wide.scales[0]));
  CHECK(wide.scales[0] == doctest::Approx(6e38 / 255).epsilon(1e-6));

  // A conv with that outlier weight, whose output range saw only small values: the output scale
  // is widened so that the outlier channel's multiplier stays below 256.
  const Graph fp32 = conv_graph(w, 2, 8, {0.0f, 0.0f});
  const QuantizeResult qg = quantize_graph(fp32, {{"x", {-1.0f, 1.0f}}, {"y", {-0.001f, 0.001f}}}, {});
  const Node& conv = node_named(qg.graph, "conv");
  CHECK(multiplier(qg.graph, conv, 1) < int8_limits::kRequantization.max / 2);
  require_cpu_runs(qg.graph);
  CHECK_THROWS_AS(quantize_graph(conv_graph({1.0f, std::numeric_limits<float>::infinity()}, 1, 2, {0.0f}),
                                 {{"x", {-1.0f, 1.0f}}, {"y", {-1.0f, 1.0f}}}, {}),
                  Error);
}

TEST_CASE("scale ratios out of the cpu kernels' range: add, global_avg_pool, and the conv bound itself") {
  SUBCASE("add of a tiny-range operand and a wide one") {
    Graph g;
    for (const char* name : {"a", "b"}) g.add_tensor({.name = name, .shape = {1, 4, 2, 2}});
    g.add_tensor({.name = "s"});
    g.add_tensor({.name = "m"});
    g.inputs = {"a", "b"};
    g.nodes = {{"sum", "add", {"a", "b"}, {"s"}, {}}, {"gap", "global_avg_pool", {"s"}, {"m"}, {}}};
    g.outputs = {"m"};
    g.infer_shapes();
    g.validate();
    // a/y far below 2^-10; the pooled output collapsed to [0, 0] (x/y far above 256).
    const Ranges ranges = {{"a", {0.0f, 1e-6f}}, {"b", {-100.0f, 100.0f}}, {"s", {-100.0f, 100.0f}}, {"m", {0.0f, 0.0f}}};
    const QuantizeResult q = quantize_graph(g, ranges, {});
    const auto scale = [&](const char* t) { return double(q.graph.tensor(std::string(t) + "_q8").quant->scales[0]); };
    CHECK(scale("a") / scale("s") >= 2 * int8_limits::kAddInput.min);
    CHECK(scale("s") / scale("m") < int8_limits::kGlobalAvgPool.max / 2);
    require_cpu_runs(q.graph);
  }
  SUBCASE("the cpu check refuses exactly outside int8_limits::kRequantization") {
    const Graph fp32 = conv_graph(uniform(8, -1.0f, 1.0f, 4), 2, 4, {0.0f, 0.0f});
    QuantizeResult q = quantize_graph(fp32, {{"x", {-1.0f, 1.0f}}, {"y", {-1.0f, 1.0f}}}, {});
    const Node conv = node_named(q.graph, "conv");
    const double xy = double(q.graph.tensor(conv.inputs[0]).quant->scales[0]) / q.graph.tensor(conv.outputs[0]).quant->scales[0];
    auto& scales = q.graph.tensors.at(conv.inputs[1]).quant->scales;
    const Backend* cpu = find_backend("cpu");
    REQUIRE(cpu != nullptr);
    scales[0] = static_cast<float>(int8_limits::kRequantization.min / xy * 0.9);
    CHECK(cpu->check_node(q.graph, conv).has_value());
    scales[0] = static_cast<float>(int8_limits::kRequantization.min / xy * 1.1);
    CHECK_FALSE(cpu->check_node(q.graph, conv).has_value());
    scales[0] = static_cast<float>(int8_limits::kRequantization.max / xy * 1.01);
    CHECK(cpu->check_node(q.graph, conv).has_value());
  }
}

TEST_CASE("--keep-fp32 op:TYPE keeps every node of the type; sensitivity ranks a layer with outliers first") {
  // x -> conv a (ordinary) -> conv b (each channel: one outlier, the rest small) -> y
  Graph g;
  g.add_tensor({.name = "x", .shape = {1, 8, 4, 4}});
  g.inputs = {"x"};
  const auto wa = uniform(64, -0.5f, 0.5f, 5);
  auto wb = uniform(64, -0.5f, 0.5f, 6);
  for (int c = 0; c < 8; ++c) wb[c * 8 + c] = 40.0f;
  g.add_tensor({.name = "wa", .shape = {8, 8, 1, 1}, .data = ConstData::copy_of(wa.data(), 256)});
  g.add_tensor({.name = "wb", .shape = {8, 8, 1, 1}, .data = ConstData::copy_of(wb.data(), 256)});
  g.add_tensor({.name = "h"});
  g.add_tensor({.name = "y"});
  g.nodes = {{"conv_a", "conv2d", {"x", "wa"}, {"h"}, {}}, {"conv_b", "conv2d", {"h", "wb"}, {"y"}, {}}};
  g.outputs = {"y"};
  g.infer_shapes();
  g.validate();
  std::vector<Sample> samples;
  for (unsigned s = 0; s < 4; ++s) samples.push_back({array_of(uniform(128, -1.0f, 1.0f, 10 + s), {1, 8, 4, 4})});

  const auto ranges = calibrate(g, samples, {});
  const QuantizeResult kept = quantize_graph(g, ranges, {.keep_fp32 = {"op:conv2d"}});
  CHECK(kept.float_nodes.size() == 2);
  for (const auto& node : kept.graph.nodes) CHECK(node.op == "conv2d");
  CHECK_THROWS_AS(quantize_graph(g, ranges, {.keep_fp32 = {"op:no_such_op"}}), Error);

  const auto ranking = layer_sensitivity(g, samples, {});
  REQUIRE(ranking.size() == 2);
  CHECK(ranking[0].node == "conv_b");
  CHECK(ranking[0].sqnr_db < ranking[1].sqnr_db);
  CHECK(ranking[1].sqnr_db > 30.0);
  // Alone, each layer costs less than both together.
  const QuantReport both = compare_quantized(g, quantize_graph(g, ranges, {}), samples);
  CHECK(both.outputs[0].error.sqnr_db < ranking[0].sqnr_db + 0.5);
}

TEST_CASE("quantize_model keeps int8 nodes the target refuses in float32 and plans the result") {
  // A 1x1 max pooling has an int8 kernel in mt's scheme but XNNPACK refuses it.
  Graph g;
  g.add_tensor({.name = "x", .shape = {1, 4, 4, 4}});
  g.inputs = {"x"};
  const auto w = uniform(16, -1.0f, 1.0f, 7);
  g.add_tensor({.name = "w", .shape = {4, 4, 1, 1}, .data = ConstData::copy_of(w.data(), 64)});
  g.add_tensor({.name = "c"});
  g.add_tensor({.name = "y"});
  g.nodes = {{"conv", "conv2d", {"x", "w"}, {"c"}, {}},
             {"pool", "max_pool2d", {"c"}, {"y"}, {{"kernel_shape", std::vector<int64_t>{1, 1}}}}};
  g.outputs = {"y"};
  g.infer_shapes();
  g.validate();
  const std::vector<Sample> samples = {{array_of(uniform(64, -1.0f, 1.0f, 8), {1, 4, 4, 4})}};
  ModelOptions options;
  options.target = find_backend("cpu");
  REQUIRE(options.target != nullptr);
  const ModelResult result = quantize_model(g, samples, options);
  REQUIRE(result.refused_nodes.size() == 1);
  CHECK(result.refused_nodes[0].node == "pool");
  CHECK(node_named(result.quantized.graph, "conv").op == "conv2d");
  CHECK(result.quantized.graph.tensor(node_named(result.quantized.graph, "conv").outputs[0]).dtype == DType::i8);
  require_cpu_runs(result.quantized.graph);
}

}  // namespace mt::quant
