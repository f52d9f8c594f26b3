// The cpu backend's prepacked form: which weights mt-prepack reorders (and which it must leave),
// the values it writes, channels-last inputs, and prepacked graphs computing what the unpacked
// ones compute on the reference backend.
#include "kernels/cpu/plan/kernel_paths.h"
#include "kernels/cpu/plan/prepack.h"
#include "lib/core/error.h"
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

HostTensor to_nhwc(const HostTensor& nchw) {
  const auto n = nchw.shape[0], c = nchw.shape[1], h = nchw.shape[2], w = nchw.shape[3];
  const auto from = nchw.values<float>();
  std::vector<float> to(from.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < h * w; ++p) to[static_cast<size_t>((b * h * w + p) * c + ch)] = from[static_cast<size_t>((b * c + ch) * h * w + p)];
  return f32({n, h, w, c}, to);
}

std::vector<float> counting(size_t count) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i);
  return values;
}

// conv 3x3 -> depthwise 3x3 stride 2 with a clamp -> conv_transpose 2x2 stride 2 -> + x: every
// kind of weight the prepack reorders, and a graph input read by a conv and by an add.
GraphBuilder small_network() {
  GraphBuilder b;
  const auto x = b.input("x", random({2, 4, 8, 6}, 1));
  const auto y = b.op("conv2d", {x, b.constant("w1", random({6, 4, 3, 3}, 2)), b.constant("b1", random({6}, 3))},
                      {{"pads", ints({1, 1, 1, 1})}});
  const auto z = b.op("conv2d", {y, b.constant("w2", random({6, 1, 3, 3}, 4))},
                      {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}, {"group", integer(6)},
                       {"act_min", real(-0.5)}, {"act_max", real(0.5)}});
  const auto t = b.op("conv_transpose2d", {z, b.constant("w3", random({6, 4, 2, 2}, 5)), b.constant("b3", random({4}, 6))},
                      {{"strides", ints({2, 2})}});
  b.output(b.op("add", {t, x}));
  return b;
}

void check_outputs(const std::vector<HostTensor>& actual, const std::vector<HostTensor>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) check_close(actual[i], expected[i], 1e-5, 1e-5);
}

}  // namespace

TEST_CASE("cpu prepack: conv2d weights become OHWI, values moved as XNNPACK reads them") {
  GraphBuilder b;
  const auto x = b.input("x", random({1, 3, 5, 5}, 1));
  b.output(b.op("conv2d", {x, b.constant("w", f32({2, 3, 2, 2}, counting(24)))}));
  const cpu::PrepackStats stats = cpu::prepack_graph(b.graph, PrepackOptions{});
  CHECK(stats.weights_reordered == 1);
  CHECK(stats.inputs_nhwc == 0);
  const TensorInfo& w = b.graph.tensor("w");
  CHECK(w.layout == "ohwi");
  CHECK(w.shape == Shape{2, 3, 2, 2});  // the logical shape stays
  const auto packed = w.data.as<float>();
  // OIHW element (o, i, s) = o*12 + i*4 + s now sits at (o*4 + s)*3 + i.
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i)
      for (int s = 0; s < 4; ++s) CHECK(packed[static_cast<size_t>((o * 4 + s) * 3 + i)] == float(o * 12 + i * 4 + s));
  CHECK(b.graph.metadata["backend"]["name"] == "cpu");
  CHECK(b.graph.metadata["backend"]["target"] == std::string(cpu_target_name(cpu::native_target())));
  CHECK(b.graph.metadata["prepack"]["input_layout"] == "nchw");
  CHECK(b.graph.metadata["prepack"]["weights_reordered"] == 1);
  CHECK(b.graph.tensor("x").layout.empty());
}

TEST_CASE("cpu prepack: int8 conv2d weights become OHWI byte by byte; their per-channel parameters stay") {
  GraphBuilder b;
  const auto x = b.input("x", HostTensor::of(DType::i8, {1, 3, 4, 4}, std::vector<int8_t>(48, 1)));
  b.graph.tensor(x).quant = QuantParams{.scales = {0.5f}, .zero_points = {0}};
  std::vector<int8_t> values(24);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int8_t>(i);
  const auto w = b.constant("w", HostTensor::of(DType::i8, {2, 3, 2, 2}, values));
  const QuantParams per_channel{.scales = {0.1f, 0.2f}, .zero_points = {0, 0}, .axis = 0};
  b.graph.tensor(w).quant = per_channel;
  b.output(b.op("conv2d", {x, w}));
  CHECK(cpu::prepack_graph(b.graph, PrepackOptions{}).weights_reordered == 1);
  const TensorInfo& packed = b.graph.tensor("w");
  CHECK(packed.layout == "ohwi");
  CHECK(packed.quant == per_channel);
  const auto bytes = packed.data.as<int8_t>();
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 3; ++i)
      for (int s = 0; s < 4; ++s) CHECK(bytes[static_cast<size_t>((o * 4 + s) * 3 + i)] == o * 12 + i * 4 + s);
}

TEST_CASE("cpu prepack: conv_transpose2d weights [I, O, kH, kW] become [O, kH, kW, I]") {
  GraphBuilder b;
  const auto x = b.input("x", random({1, 2, 3, 3}, 1));
  b.output(b.op("conv_transpose2d", {x, b.constant("w", f32({2, 3, 1, 2}, counting(12)))}));
  cpu::prepack_graph(b.graph, PrepackOptions{});
  REQUIRE(b.graph.tensor("w").layout == "ohwi");
  const auto packed = b.graph.tensor("w").data.as<float>();
  // [i][o][s] = i*6 + o*2 + s -> [o][s][i].
  for (int o = 0; o < 3; ++o)
    for (int s = 0; s < 2; ++s)
      for (int i = 0; i < 2; ++i) CHECK(packed[static_cast<size_t>((o * 2 + s) * 2 + i)] == float(i * 6 + o * 2 + s));
}

TEST_CASE("cpu prepack: weights it must leave alone") {
  GraphBuilder b;
  const auto x = b.input("x", random({1, 4, 4, 4}, 1));
  // Read by a conv and by a mul: another kernel reads the bytes row-major.
  const auto shared = b.constant("shared", random({4, 4, 1, 1}, 2));
  const auto y = b.op("conv2d", {x, shared});
  b.output(b.op("mul", {y, shared}));
  // conv_transpose2d with two groups: XNNPACK's order is no permutation of the logical dims.
  b.output(b.op("conv_transpose2d", {x, b.constant("grouped", random({4, 3, 2, 2}, 3))}, {{"group", integer(2)}}));
  // Weights computed at run time.
  const auto computed = b.op("relu", {b.constant("raw", random({2, 4, 1, 1}, 4))});
  b.output(b.op("conv2d", {x, computed}));
  const cpu::PrepackStats stats = cpu::prepack_graph(b.graph, PrepackOptions{});
  CHECK(stats.weights_reordered == 0);
  for (const char* name : {"shared", "grouped", "raw"}) CHECK(b.graph.tensor(name).layout.empty());
  // Still runs on cpu and computes what the reference computes from the unpacked graph.
  GraphBuilder unpacked = b;
  unpacked.graph.metadata = nlohmann::json::object();
  check_outputs(run_graph(cpu_backend(), b.graph, b.feeds), run_graph(reference_backend(), unpacked.graph, b.feeds));
}

TEST_CASE("cpu prepack: a prepacked network matches the unpacked one on the reference backend") {
  const GraphBuilder original = small_network();
  const auto expected = run_graph(reference_backend(), original.graph, original.feeds);
  GraphBuilder packed = original;
  // Every conv weight stored for its kernel: the depthwise one packed where the CPU has AVX-512F.
  const cpu::PrepackStats stats = cpu::prepack_graph(packed.graph, PrepackOptions{});
  CHECK(stats.weights_reordered + stats.weights_packed == 3);
  for (int threads : {1, 2}) {
    INFO("threads: ", threads);
    check_outputs(run_graph(cpu_backend(), packed.graph, packed.feeds, threads), expected);
  }
}

TEST_CASE("cpu prepack: --input-layout nhwc declares the input channels-last; callers pass NHWC data") {
  const GraphBuilder original = small_network();
  const auto expected = run_graph(reference_backend(), original.graph, original.feeds);
  GraphBuilder packed = original;
  const cpu::PrepackStats stats = cpu::prepack_graph(packed.graph, PrepackOptions{.input_layout = "nhwc"});
  CHECK(stats.inputs_nhwc == 1);
  CHECK(packed.graph.tensor("x").layout == "nhwc");
  CHECK(packed.graph.tensor("x").shape == Shape{2, 4, 8, 6});
  CHECK(packed.graph.metadata["prepack"]["input_layout"] == "nhwc");
  packed.feeds.at("x") = to_nhwc(packed.feeds.at("x"));
  for (int threads : {1, 2}) {
    INFO("threads: ", threads);
    check_outputs(run_graph(cpu_backend(), packed.graph, packed.feeds, threads), expected);
  }
}

TEST_CASE("cpu prepack: option and model errors") {
  GraphBuilder b;
  const auto x = b.input("x", random({2, 3}, 1));
  b.output(b.op("relu", {x}));
  try {
    cpu::prepack_graph(b.graph, PrepackOptions{.input_layout = "nwhc"});
    FAIL("an unknown layout was accepted");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::usage);
  }
  try {
    cpu::prepack_graph(b.graph, PrepackOptions{.input_layout = "nhwc"});
    FAIL("nhwc accepted on a model without a 4-D input");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
    CHECK(std::string(error.what()).find("no 4-D float32 input") != std::string::npos);
  }
}

TEST_CASE("cpu prepack: other backends refuse a prepacked model; cpu refuses layouts where it does not read them") {
  GraphBuilder packed = small_network();
  cpu::prepack_graph(packed.graph, PrepackOptions{});
  try {
    reference_backend().plan(packed.graph, {});
    FAIL("the reference backend planned a model prepacked for cpu");
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
    CHECK(std::string(error.what()) ==
          "the model was prepacked for backend 'cpu' and cannot run on 'reference': run it on cpu, or use the model "
          "from before mt-prepack");
  }
  // "ohwi" on the input of an add, "nhwc" on a constant: listed as nodes cpu cannot run.
  GraphBuilder b;
  const auto x = b.input("x", random({1, 2, 2, 2}, 1));
  b.output(b.op("add", {x, b.constant("c", random({1, 2, 2, 2}, 2))}));
  b.graph.tensor("c").layout = "ohwi";
  CHECK(cpu_backend().check_node(b.graph, b.graph.nodes[0]) == "tensor 'c' has layout 'ohwi', which cpu does not read here");
  b.graph.tensor("c").layout = "nhwc";
  CHECK(cpu_backend().check_node(b.graph, b.graph.nodes[0]).has_value());
  b.graph.tensor("c").layout.clear();
  b.graph.tensor("x").layout = "nhwc";
  CHECK(!cpu_backend().check_node(b.graph, b.graph.nodes[0]).has_value());
}

}  // namespace mt::test
