// The quantize pass on a small conv-pool-linear graph, the reference int8 kernels against fp32
// arithmetic on the same dequantized values (within 1 LSB), the report, and the model file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "lib/format/model_file.h"
#include "lib/ops/int8_arithmetic.h"
#include "lib/ops/registry.h"
#include "lib/quant/quant_report.h"
#include "lib/quant/quantize_model.h"

namespace mt::quant {
namespace {

constexpr float kFloatMax = std::numeric_limits<float>::max();

TensorInfo constant(const std::string& name, Shape shape, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(static_cast<size_t>(numel(shape)));
  for (auto& v : values) v = dist(rng);
  return {.name = name, .shape = std::move(shape), .data = ConstData::copy_of(values.data(), values.size() * 4)};
}

// x[1,3,8,8] -> conv3x3 (8, pad 1, fused ReLU) -> max_pool 2x2 -> conv 1x1 (8) -> add (residual)
// -> global_avg_pool -> flatten -> linear (5) -> softmax
Graph small_network() {
  std::mt19937 rng(3);
  Graph g;
  g.add_tensor({.name = "x", .shape = {1, 3, 8, 8}});
  g.inputs = {"x"};
  g.add_tensor(constant("w1", {8, 3, 3, 3}, rng, -0.5f, 0.5f));
  g.add_tensor(constant("b1", {8}, rng, -0.2f, 0.2f));
  g.add_tensor(constant("w2", {8, 8, 1, 1}, rng, -0.5f, 0.5f));
  g.add_tensor(constant("w3", {5, 8}, rng, -1.0f, 1.0f));
  g.add_tensor(constant("b3", {5}, rng, -0.2f, 0.2f));
  for (const char* name : {"c1", "p1", "c2", "s", "g", "f", "l", "y"}) g.add_tensor({.name = name});
  g.nodes = {
      {"conv1", "conv2d", {"x", "w1", "b1"}, {"c1"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"act_min", 0.0}}},
      {"pool", "max_pool2d", {"c1"}, {"p1"}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}},
      {"conv2", "conv2d", {"p1", "w2"}, {"c2"}, {}},
      {"residual", "add", {"c2", "p1"}, {"s"}, {}},
      {"gap", "global_avg_pool", {"s"}, {"g"}, {}},
      {"flat", "flatten", {"g"}, {"f"}, {}},
      {"fc", "linear", {"f", "w3", "b3"}, {"l"}, {}},
      {"prob", "softmax", {"l"}, {"y"}, {}},
  };
  g.outputs = {"y"};
  g.infer_shapes();
  g.validate();
  return g;
}

std::vector<Sample> random_samples(size_t count) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Sample> samples;
  for (size_t s = 0; s < count; ++s) {
    std::vector<float> values(3 * 8 * 8);
    for (auto& v : values) v = dist(rng);
    samples.push_back({HostArray{DType::f32, {1, 3, 8, 8}, ConstData::copy_of(values.data(), values.size() * 4)}});
  }
  return samples;
}

std::map<std::string, size_t> op_counts(const Graph& graph) {
  std::map<std::string, size_t> counts;
  for (const auto& node : graph.nodes) ++counts[node.op];
  return counts;
}

const Node& node_writing(const Graph& graph, const std::string& tensor) {
  for (const auto& node : graph.nodes)
    if (node.outputs[0] == tensor) return node;
  FAIL("no node writes " << tensor);
  throw;
}

}  // namespace

TEST_CASE("the pass quantizes what has int8 kernels and dequantizes before the rest") {
  const Graph fp32 = small_network();
  const auto samples = random_samples(8);
  const auto ranges = calibrate(fp32, samples, {});
  const QuantizeResult q = quantize_graph(fp32, ranges, {});
  const auto counts = op_counts(q.graph);
  CHECK(counts.at("quantize") == 1);
  CHECK(counts.at("dequantize") == 1);
  CHECK(q.graph.tensor("c1_q8").dtype == DType::i8);
  CHECK(q.graph.tensor("f_q8").dtype == DType::i8);
  CHECK(q.graph.tensor("y").dtype == DType::f32);
  CHECK(q.graph.inputs == std::vector<std::string>{"x"});
  // Weights per channel, bias int32 at x_scale * w_scale, pool and flatten keep their input's parameters.
  const Node& conv1 = node_writing(q.graph, "c1_q8");
  const TensorInfo& w1 = q.graph.tensor(conv1.inputs[1]);
  CHECK(w1.dtype == DType::i8);
  CHECK(w1.quant->axis == 0);
  CHECK(w1.quant->scales.size() == 8);
  const TensorInfo& b1 = q.graph.tensor(conv1.inputs[2]);
  CHECK(b1.dtype == DType::i32);
  CHECK(b1.quant->scales[3] == doctest::Approx(q.graph.tensor(conv1.inputs[0]).quant->scales[0] * w1.quant->scales[3]));
  CHECK(q.graph.tensor("p1_q8").quant == q.graph.tensor("c1_q8").quant);
  CHECK(q.graph.tensor("f_q8").quant == q.graph.tensor("g_q8").quant);
  CHECK(q.graph.tensor("c1_q8").quant->zero_points[0] == -128);  // ReLU output: [0, max]
  REQUIRE(q.float_nodes.size() == 1);
  CHECK(q.float_nodes[0].node == "prob");
  CHECK(q.float_nodes[0].reason == "no int8 kernel");

  SUBCASE("--keep-fp32 and --quantize-io") {
    const QuantizeResult kept = quantize_graph(fp32, ranges, {.keep_fp32 = {"fc"}});
    CHECK(node_writing(kept.graph, "l").op == "linear");
    CHECK(kept.graph.tensor(node_writing(kept.graph, "l").inputs[1]).dtype == DType::f32);
    CHECK(kept.float_nodes.size() == 2);
    const QuantizeResult io = quantize_graph(fp32, ranges, {.quantize_io = true});
    CHECK(io.graph.tensor(io.graph.inputs[0]).dtype == DType::i8);
    CHECK(op_counts(io.graph).count("quantize") == 0);
    CHECK_THROWS_AS(quantize_graph(fp32, ranges, {.keep_fp32 = {"nope"}}), Error);
  }

  SUBCASE("quant parameters survive the model file") {
    const std::string path = "test_quant_roundtrip.mt";
    save_model(q.graph, path);
    const Graph read = read_model(path);
    std::remove(path.c_str());
    for (const auto& [name, info] : q.graph.tensors) CHECK(read.tensor(name).quant == info.quant);
  }
}

TEST_CASE("tied parameters: concat inputs and output share the union range; sigmoid output is 1/256, -128") {
  // x -> conv a (ReLU) and conv b -> concat -> sigmoid; mul(concat, sigmoid) -> hardswish
  std::mt19937 rng(5);
  Graph g;
  g.add_tensor({.name = "x", .shape = {1, 3, 8, 8}});
  g.inputs = {"x"};
  g.add_tensor(constant("wa", {4, 3, 3, 3}, rng, -0.5f, 0.5f));
  g.add_tensor(constant("wb", {4, 3, 1, 1}, rng, -2.0f, 2.0f));
  for (const char* name : {"a", "b", "c", "s", "m", "h"}) g.add_tensor({.name = name});
  g.nodes = {
      {"conv_a", "conv2d", {"x", "wa"}, {"a"}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"act_min", 0.0}}},
      {"conv_b", "conv2d", {"x", "wb"}, {"b"}, {}},
      {"cat", "concat", {"a", "b"}, {"c"}, {{"axis", int64_t{1}}}},
      {"sig", "sigmoid", {"c"}, {"s"}, {}},
      {"gate", "mul", {"c", "s"}, {"m"}, {}},
      {"act", "hardswish", {"m"}, {"h"}, {}},
  };
  g.outputs = {"h"};
  g.infer_shapes();
  g.validate();
  const auto ranges = calibrate(g, random_samples(4), {});
  const QuantizeResult q = quantize_graph(g, ranges, {});
  CHECK(q.float_nodes.empty());
  const auto counts = op_counts(q.graph);
  CHECK(counts.at("quantize") == 1);
  CHECK(counts.at("dequantize") == 1);
  const auto& qa = q.graph.tensor("a_q8").quant;
  CHECK(qa == q.graph.tensor("b_q8").quant);
  CHECK(qa == q.graph.tensor("c_q8").quant);
  // The union of a's [0, max] and b's signed range: a's zero point is no longer -128.
  const Range& ra = ranges.at("a");
  const Range& rb = ranges.at("b");
  CHECK(rb.lo < 0.0f);
  CHECK(qa->zero_points[0] > -128);
  CHECK(qa->scales[0] == doctest::Approx((std::max(ra.hi, rb.hi) - std::min(ra.lo, rb.lo)) / 255.0f));
  CHECK(q.graph.tensor("s_q8").quant == QuantParams{{1.0f / 256.0f}, {-128}, -1});
  CHECK(node_writing(q.graph, "m_q8").op == "mul");
  CHECK(node_writing(q.graph, "h_q8").op == "hardswish");
}

TEST_CASE("reference int8 kernels match fp32 arithmetic on the dequantized values within 1 LSB") {
  const Graph fp32 = small_network();
  const auto samples = random_samples(8);
  const QuantizeResult q = quantize_graph(fp32, calibrate(fp32, samples, {}), {});
  const Graph& g = q.graph;
  // For each int8 node: run it alone in int8, and in float32 on dequantized inputs, weights and
  // bias; quantize the float result with the output's parameters: they differ by at most 1.
  const std::vector<std::string> int8_outputs = {"c1_q8", "p1_q8", "c2_q8", "s_q8", "g_q8", "l_q8"};
  for (const Sample& sample : samples) {
    const auto values = run_and_capture(g, sample, {"x_q8", "c1_q8", "p1_q8", "c2_q8", "s_q8", "g_q8", "f_q8", "l_q8"});
    std::map<std::string, HostArray> by_name;
    const std::vector<std::string> names = {"x_q8", "c1_q8", "p1_q8", "c2_q8", "s_q8", "g_q8", "f_q8", "l_q8"};
    for (size_t i = 0; i < names.size(); ++i) by_name[names[i]] = values[i];
    for (const auto& out : int8_outputs) {
      const Node& node = node_writing(g, out);
      Graph single;
      Node float_node = node;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const TensorInfo& info = g.tensor(node.inputs[i]);
        const bool activation = !info.is_constant();
        const size_t n = static_cast<size_t>(info.numel());
        std::vector<float> real(n);
        const int64_t channels = info.shape.empty() ? 1 : info.shape[0];
        for (size_t e = 0; e < n; ++e) {
          const size_t c = info.quant->axis == 0 ? e / (n / static_cast<size_t>(channels)) : 0;
          const float scale = info.quant->scales[c];
          const int32_t zero = info.quant->zero_points[c];
          if (info.dtype == DType::i32)
            real[e] = static_cast<float>(static_cast<double>(info.data.as<int32_t>()[e]) * scale);
          else
            real[e] = dequantize_value(
                activation ? by_name.at(node.inputs[i]).as<int8_t>()[e] : info.data.as<int8_t>()[e], scale, zero);
        }
        const std::string name = "in" + std::to_string(i);
        single.add_tensor({.name = name, .shape = info.shape, .data = ConstData::copy_of(real.data(), n * 4)});
        float_node.inputs[i] = name;
      }
      float_node.outputs = {"out"};
      single.add_tensor({.name = "out"});
      single.nodes = {float_node};
      single.outputs = {"out"};
      // Constants only: feed one dummy input through identity so the graph has an input.
      single.add_tensor({.name = "dummy", .shape = {1}});
      single.add_tensor({.name = "dummy_out"});
      single.inputs = {"dummy"};
      single.nodes.push_back({"keep", "identity", {"dummy"}, {"dummy_out"}, {}});
      single.outputs.push_back("dummy_out");
      single.infer_shapes();
      const float one = 0;
      const auto expected = run_and_capture(single, {HostArray{DType::f32, {1}, ConstData::copy_of(&one, 4)}}, {"out"});
      const QuantParams& params = *g.tensor(out).quant;
      const int8_t* actual = by_name.at(out).as<int8_t>();
      int worst = 0;
      for (int64_t e = 0; e < expected[0].numel(); ++e) {
        int8_t want = quantize_value(expected[0].as<float>()[e], params.scales[0], params.zero_points[0]);
        if (node.op == "conv2d" && attr_float(node, "act_min") > -kFloatMax) want = std::max<int8_t>(want, params.zero_points[0]);
        worst = std::max(worst, std::abs(static_cast<int>(want) - actual[e]));
      }
      INFO(node.name << " (" << node.op << ")");
      CHECK(worst <= 1);
    }
  }
}

TEST_CASE("report: per-layer error worst first, outputs close to fp32, auto-fallback") {
  const Graph fp32 = small_network();
  const auto samples = random_samples(16);
  ModelResult result = quantize_model(fp32, samples, {.report = true});
  REQUIRE(result.report);
  const QuantReport& report = *result.report;
  REQUIRE(report.layers.size() == 6);
  for (size_t i = 1; i < report.layers.size(); ++i)
    CHECK(report.layers[i - 1].error.sqnr_db <= report.layers[i].error.sqnr_db);
  for (const auto& layer : report.layers) CHECK(layer.error.sqnr_db > 20.0);
  REQUIRE(report.outputs.size() == 1);
  CHECK(report.outputs[0].error.cosine > 0.999);
  CHECK(report.outputs[0].top1_agreement >= 0.9);
  CHECK(report.int8_nodes == 6);
  CHECK(report_json(report)["layers"].size() == 6);
  CHECK(report_text(report).find("prob") != std::string::npos);

  // A threshold above every layer's SQNR moves layers to float32 until none is int8.
  ModelResult all = quantize_model(fp32, samples, {.auto_fallback_db = 1000.0});
  CHECK(all.report->layers.empty());
  CHECK(all.fallback_nodes.size() >= 1);
  CHECK(op_counts(all.quantized.graph).count("quantize") == 0);
}

TEST_CASE("a prepacked model is refused: quantize before mt-prepack") {
  Graph packed = small_network();
  packed.metadata["backend"] = "cpu";
  try {
    quantize_model(packed, random_samples(2), {});
    FAIL("a prepacked model was quantized");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
    CHECK(std::string(e.what()) ==
          "the model is prepacked for backend 'cpu': quantize the model from before mt-prepack, then prepack the int8 "
          "model");
  }
}

}  // namespace mt::quant
