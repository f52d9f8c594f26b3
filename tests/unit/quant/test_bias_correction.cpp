// Empirical bias correction: the mean patch gives a conv's mean output exactly (strides, pads,
// dilations, groups), and correcting the biases removes the mean shift that rounding the weights
// adds, layer after layer.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "lib/quant/bias_correction.h"
#include "lib/quant/calibration.h"
#include "lib/quant/quant_report.h"

namespace mt::quant {
namespace {

using Ints = std::vector<int64_t>;

TensorInfo constant(const std::string& name, Shape shape, std::vector<float> values) {
  return {.name = name, .shape = std::move(shape), .data = ConstData::copy_of(values.data(), values.size() * 4)};
}

std::vector<float> uniform(size_t count, std::mt19937& rng, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(count);
  for (auto& v : values) v = dist(rng);
  return values;
}

std::vector<Sample> samples(const Shape& shape, size_t count, float lo, float hi) {
  std::mt19937 rng(5);
  std::vector<Sample> result;
  for (size_t s = 0; s < count; ++s) {
    const auto values = uniform(static_cast<size_t>(numel(shape)), rng, lo, hi);
    result.push_back({HostArray{DType::f32, shape, ConstData::copy_of(values.data(), values.size() * 4)}});
  }
  return result;
}

// Per channel (axis 1), the mean of `values` over all other axes.
std::vector<double> channel_means(const std::vector<float>& values, const Shape& shape) {
  const auto channels = static_cast<size_t>(shape[1]);
  const size_t inner = values.size() / static_cast<size_t>(shape[0]) / channels;
  std::vector<double> means(channels, 0.0);
  for (size_t i = 0; i < values.size(); ++i) means[i / inner % channels] += values[i];
  for (double& m : means) m /= static_cast<double>(values.size() / channels);
  return means;
}

TEST_CASE("mean_patch: sum of weight * mean patch + bias is the conv's mean output") {
  std::mt19937 rng(9);
  for (const auto& params :
       {std::tuple{1, 1, 1, 1}, std::tuple{2, 2, 1, 1}, std::tuple{4, 2, 0, 2}, std::tuple{1, 3, 2, 1}}) {
    // Named copies, not a structured binding: CAPTURE takes them by reference, which clang 14 refuses.
    const int group = std::get<0>(params), stride = std::get<1>(params), pad = std::get<2>(params),
              dilation = std::get<3>(params);
    CAPTURE(group);
    CAPTURE(stride);
    const Shape x_shape{2, 4, 9, 7}, w_shape{8, 4 / group, 3, 3};
    Graph g;
    g.add_tensor({.name = "x", .shape = x_shape});
    g.inputs = {"x"};
    const auto weights = uniform(static_cast<size_t>(numel(w_shape)), rng, -1, 1);
    const auto bias = uniform(8, rng, -1, 1);
    g.add_tensor(constant("w", w_shape, weights));
    g.add_tensor(constant("b", {8}, bias));
    g.add_tensor({.name = "y"});
    g.nodes = {{"conv", "conv2d", {"x", "w", "b"}, {"y"},
                {{"group", int64_t{group}}, {"strides", Ints{stride, stride}}, {"pads", Ints{pad, pad, pad, pad}},
                 {"dilations", Ints{dilation, dilation}}}}};
    g.outputs = {"y"};
    g.infer_shapes();
    g.validate();
    const Sample sample = samples(x_shape, 1, -1, 2)[0];
    const HostArray y = run_and_capture(g, sample, {"y"})[0];
    const auto expected = channel_means(as_floats(y, g.tensor("y")), y.shape);
    const auto patch = mean_patch(g.nodes[0], w_shape, x_shape, {sample[0].as<float>(), static_cast<size_t>(sample[0].numel())});
    REQUIRE(patch.size() == 4 * 9);
    const size_t per_channel = static_cast<size_t>(4 / group * 9), per_group = static_cast<size_t>(8 / group);
    for (size_t m = 0; m < 8; ++m) {
      double mean = bias[m];
      for (size_t i = 0; i < per_channel; ++i) mean += weights[m * per_channel + i] * patch[m / per_group * per_channel + i];
      CHECK(mean == doctest::Approx(expected[m]).epsilon(1e-5));
    }
  }
}

// x[1,8,6,6] in [0, 1] -> conv 3x3 (8, pad 1, no bias) -> global_avg_pool -> flatten -> linear (4).
// Every weight but the first of a channel is 1.55 steps of that channel's int8 scale, so rounding
// moves all of them up by 0.45 steps: the int8 conv's mean output is too high by about
// 71 * 0.45 / 127 * 0.5 = 0.13 in every channel (less where the window covers padding), which
// the linear layer then inherits.
Graph shifted_network() {
  Graph g;
  g.add_tensor({.name = "x", .shape = {1, 8, 6, 6}});
  g.inputs = {"x"};
  std::vector<float> w1(8 * 8 * 9, 1.55f / 127.0f), w2(4 * 8, 1.55f / 127.0f);
  for (size_t m = 0; m < 8; ++m) w1[m * 72] = m % 2 ? 1.0f : -1.0f;
  for (size_t m = 0; m < 4; ++m) w2[m * 8] = 1.0f;
  g.add_tensor(constant("w1", {8, 8, 3, 3}, w1));
  g.add_tensor(constant("w2", {4, 8}, w2));
  g.add_tensor(constant("b2", {4}, {0.1f, -0.1f, 0.2f, 0.0f}));
  for (const char* name : {"c", "g", "f", "y"}) g.add_tensor({.name = name});
  g.nodes = {
      {"conv", "conv2d", {"x", "w1"}, {"c"}, {{"pads", Ints{1, 1, 1, 1}}}},
      {"gap", "global_avg_pool", {"c"}, {"g"}, {}},
      {"flat", "flatten", {"g"}, {"f"}, {}},
      {"fc", "linear", {"f", "w2", "b2"}, {"y"}, {}},
  };
  g.outputs = {"y"};
  g.infer_shapes();
  g.validate();
  return g;
}

// The largest |mean difference| per channel between the fp32 and int8 values of `tensor`.
double worst_mean_shift(const Graph& fp32, const QuantizeResult& q, const std::vector<Sample>& data,
                        const std::string& tensor) {
  const std::string q_name = q.int8_tensor.count(tensor) ? q.int8_tensor.at(tensor) : tensor;
  std::vector<double> shift;
  for (const Sample& sample : data) {
    const HostArray x = run_and_capture(fp32, sample, {tensor})[0];
    const HostArray y = run_and_capture(q.graph, prepare_sample(q.graph, sample), {q_name})[0];
    const auto a = channel_means(as_floats(x, fp32.tensor(tensor)), x.shape);
    const auto b = channel_means(as_floats(y, q.graph.tensor(q_name)), y.shape);
    shift.resize(a.size(), 0.0);
    for (size_t c = 0; c < a.size(); ++c) shift[c] += (b[c] - a[c]) / static_cast<double>(data.size());
  }
  double worst = 0;
  for (double s : shift) worst = std::max(worst, std::abs(s));
  return worst;
}

TEST_CASE("correct_biases removes the mean shift of rounded weights, layer after layer") {
  const Graph fp32 = shifted_network();
  const auto data = samples({1, 8, 6, 6}, 8, 0.0f, 1.0f);
  const auto ranges = calibrate(fp32, data, {});
  QuantizeResult q = quantize_graph(fp32, ranges, {});
  REQUIRE(q.graph.tensor(q.int8_tensor.at("c")).dtype == DType::i8);
  const double conv_before = worst_mean_shift(fp32, q, data, "c");
  const double fc_before = worst_mean_shift(fp32, q, data, "y");
  CHECK(conv_before > 0.05);
  CHECK(fc_before > 0.05);

  const BiasCorrectionStats stats = correct_biases(fp32, q, data);
  CHECK(stats.layers == 2);
  CHECK(stats.max_shift > 1.0);
  // The conv had no bias: it has an int32 one now, at x_scale * w_scale.
  const Node& conv = q.graph.nodes[1];
  REQUIRE(conv.op == "conv2d");
  REQUIRE(conv.inputs.size() == 3);
  const TensorInfo& bias = q.graph.tensor(conv.inputs[2]);
  CHECK(bias.dtype == DType::i32);
  CHECK(bias.quant->scales[3] ==
        doctest::Approx(q.graph.tensor(conv.inputs[0]).quant->scales[0] * q.graph.tensor(conv.inputs[1]).quant->scales[3]));
  // What is left is output rounding: well under one step of the outputs' scales.
  const double conv_step = q.graph.tensor(q.int8_tensor.at("c")).quant->scales[0];
  CHECK(worst_mean_shift(fp32, q, data, "c") < 0.5 * conv_step);
  CHECK(worst_mean_shift(fp32, q, data, "y") < 0.1 * fc_before);
}

}  // namespace
}  // namespace mt::quant
