// float32 convs followed by a hardswish or silu and a residual add (and pointwise convs after a
// per-channel gate, a mul that folds into their weights), on the cpu backend in every cpu
// variant of the option matrix and with PlanOptions::conv_fusion off, against the reference
// backend (the harness's tolerance, 1e-4 of the output range): on AVX-512 CPUs the planner runs
// those nodes in the output stage of our own conv engines (kernels/cpu/ops/conv_fusion.h), which the
// one-node cases of the harness cannot reach. Each graph also states which nodes may be fused and
// through which engine, and the test checks that exactly those plan no step of their own where that
// engine runs, and none otherwise. Each ends in a transpose to NHWC, so that no output reordering
// step is charged to the last node.
#include <doctest/doctest.h>
#include <xnnpack.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/plan/kernel_paths.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/reference/reference_backend.h"
#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_runner.h"
#include "tests/ops/option_matrix.h"

namespace mt::optest {
namespace {

// Builds a float32 graph with seeded random inputs and constants.
class FusionGraph {
 public:
  explicit FusionGraph(uint32_t seed) : rng_(seed) {}

  void input(const std::string& name, Shape shape) {
    HostArray data{.dtype = DType::f32, .shape = shape, .data = random_floats(numel(shape), 2.0f)};
    built_.graph.add_tensor({.name = name, .dtype = DType::f32, .shape = std::move(shape)});
    built_.graph.inputs.push_back(name);
    built_.inputs.push_back(std::move(data));
  }

  // y = conv(x) + bias, `group` groups, `pad` on every side, fused clamp [low, high].
  void conv(const std::string& x, const std::string& y, Shape w_shape, int64_t stride, int64_t pad, int64_t group,
            double low = -3.4028234663852886e+38, double high = 3.4028234663852886e+38) {
    const int64_t fan_in = w_shape[1] * w_shape[2] * w_shape[3];
    add_constant(y + "_w", w_shape, 1.5f / static_cast<float>(fan_in));
    add_constant(y + "_b", {w_shape[0]}, 0.5f);
    built_.graph.add_tensor({.name = y, .dtype = DType::f32});
    built_.graph.nodes.push_back({.name = y + "_conv",
                                  .op = "conv2d",
                                  .inputs = {x, y + "_w", y + "_b"},
                                  .outputs = {y},
                                  .attrs = {{"strides", Ints{stride, stride}},
                                            {"pads", Ints{pad, pad, pad, pad}},
                                            {"dilations", Ints{1, 1}},
                                            {"group", group},
                                            {"act_min", low},
                                            {"act_max", high}}});
  }

  void unary(const std::string& op, const std::string& x, const std::string& y) {
    built_.graph.add_tensor({.name = y, .dtype = DType::f32});
    built_.graph.nodes.push_back({.name = y + "_" + op, .op = op, .inputs = {x}, .outputs = {y}});
  }

  void add(const std::string& a, const std::string& b, const std::string& y, bool relu = false) {
    built_.graph.add_tensor({.name = y, .dtype = DType::f32});
    Node node{.name = y + "_add", .op = "add", .inputs = {a, b}, .outputs = {y}};
    if (relu) node.attrs["act_min"] = 0.0;
    built_.graph.nodes.push_back(std::move(node));
  }

  // y = op(inputs) for a node without weights (concat, reshape, transpose, slice).
  void node(const std::string& op, std::vector<std::string> inputs, const std::string& y, Attributes attrs) {
    built_.graph.add_tensor({.name = y, .dtype = DType::f32});
    built_.graph.nodes.push_back(
        {.name = y + "_" + op, .op = op, .inputs = std::move(inputs), .outputs = {y}, .attrs = std::move(attrs)});
  }

  void mul(const std::string& a, const std::string& b, const std::string& y) {
    built_.graph.add_tensor({.name = y, .dtype = DType::f32});
    built_.graph.nodes.push_back({.name = y + "_mul", .op = "mul", .inputs = {a, b}, .outputs = {y}});
  }

  // out = y in NHWC order: the cpu plan's NHWC result leaves without a reordering step.
  void to_nhwc(const std::string& y, const std::string& out) {
    built_.graph.add_tensor({.name = out, .dtype = DType::f32});
    built_.graph.nodes.push_back({.name = out + "_transpose",
                                  .op = "transpose",
                                  .inputs = {y},
                                  .outputs = {out},
                                  .attrs = {{"perm", Ints{0, 2, 3, 1}}}});
  }

  CaseGraph finish(std::vector<std::string> outputs) {
    built_.graph.outputs = std::move(outputs);
    built_.graph.infer_shapes();
    built_.graph.validate();
    return built_;
  }

 private:
  void add_constant(const std::string& name, Shape shape, float scale) {
    TensorInfo info{.name = name, .dtype = DType::f32, .shape = shape};
    info.data = random_floats(numel(shape), scale);
    built_.graph.add_tensor(std::move(info));
  }
  ConstData random_floats(int64_t count, float scale) {
    ConstData data = ConstData::allocate(static_cast<size_t>(count) * sizeof(float));
    std::uniform_real_distribution<float> values(-scale, scale);
    auto* f = reinterpret_cast<float*>(data.mutable_data());
    for (int64_t i = 0; i < count; ++i) f[i] = values(rng_);
    return data;
  }
  std::mt19937 rng_;
  CaseGraph built_;
};

// depthwise_pointwise: a depthwise conv and the pointwise conv after it as one step (both engines);
// pointwise_depthwise: an expanding pointwise conv and the depthwise conv after it.
enum class Engine { gemm, depthwise, stem, depthwise_pointwise, pointwise_depthwise };

struct FusionCase {
  std::string name;
  CaseGraph built;
  Engine engine;
  size_t fusable = 0;  // nodes after a conv that its engine plans into the conv's step
  size_t fused_convs = 0;  // of those, convs (a pointwise conv after a depthwise one, or the reverse)
  // Nodes fused with conv fusion on where the engine does not run (for depthwise_pointwise: where one
  // of its two does not, the other conv then fusing its own nodes), and where neither of the two runs.
  size_t fusable_without_engine = 0;
  size_t fusable_without_both = 0;
};

std::vector<FusionCase> fusion_cases() {
  std::vector<FusionCase> cases;
  {  // EfficientNet's expansion: 1x1 conv + silu.
    FusionGraph g(1);
    g.input("x", {1, 16, 7, 9});
    g.conv("x", "c", {40, 16, 1, 1}, 1, 0, 1);
    g.unary("silu", "c", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"pointwise conv + silu", g.finish({"out"}), Engine::gemm, 1});
  }
  {  // MobileNetV3's: 3x3 stride-2 conv (indirect GEMM) + hardswish, then a residual add with relu.
    FusionGraph g(2);
    g.input("x", {2, 16, 10, 10});
    g.input("r", {2, 24, 5, 5});
    g.conv("x", "c", {24, 16, 3, 3}, 2, 1, 1);
    g.unary("hardswish", "c", "h");
    g.add("r", "h", "y", true);
    g.to_nhwc("y", "out");
    cases.push_back({"3x3 s2 conv + hardswish + add(residual, .) relu", g.finish({"out"}), Engine::gemm, 2});
  }
  {  // MobileNetV2's projection: 1x1 conv (a last panel of 8 columns) + residual add.
    FusionGraph g(3);
    g.input("x", {1, 48, 6, 6});
    g.input("r", {1, 40, 6, 6});
    g.conv("x", "c", {40, 48, 1, 1}, 1, 0, 1);
    g.add("c", "r", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"pointwise conv + residual add", g.finish({"out"}), Engine::gemm, 1});
  }
  {  // Depthwise 3x3 with relu6 clamp, then silu.
    FusionGraph g(4);
    g.input("x", {1, 24, 9, 19});
    g.conv("x", "c", {24, 1, 3, 3}, 1, 1, 24, 0.0, 6.0);
    g.unary("silu", "c", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"depthwise 3x3 relu6 + silu", g.finish({"out"}), Engine::depthwise, 1});
  }
  {  // Depthwise 5x5 + hardswish + residual add.
    FusionGraph g(5);
    g.input("x", {1, 20, 7, 7});
    g.conv("x", "c", {20, 1, 5, 5}, 1, 2, 20);
    g.unary("hardswish", "c", "h");
    g.add("h", "x", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"depthwise 5x5 + hardswish + add(., input)", g.finish({"out"}), Engine::depthwise, 2});
  }
  {  // A stem: 3 -> 64 channels, stride 2, + silu.
    FusionGraph g(9);
    g.input("x", {1, 3, 15, 17});
    g.conv("x", "c", {64, 3, 3, 3}, 2, 1, 1);
    g.unary("silu", "c", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"stem conv + silu", g.finish({"out"}), Engine::stem, 1});
  }
  {  // Not fusable: the conv's output is read twice (silu and the graph's second output).
    FusionGraph g(6);
    g.input("x", {1, 16, 6, 6});
    g.conv("x", "c", {20, 16, 1, 1}, 1, 0, 1);
    g.unary("silu", "c", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"conv output also a graph output", g.finish({"out", "c"}), Engine::gemm, 0});
  }
  {  // Fuses the silu only: the add's other operand is broadcast.
    FusionGraph g(7);
    g.input("x", {1, 16, 6, 6});
    g.input("r", {20, 1, 1});
    g.conv("x", "c", {20, 16, 1, 1}, 1, 0, 1);
    g.unary("silu", "c", "s");
    g.add("s", "r", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"silu, then a broadcast add", g.finish({"out"}), Engine::gemm, 1});
  }
  {  // Not fusable: the add's other operand is computed after the conv (by a later node).
    FusionGraph g(8);
    g.input("x", {1, 16, 6, 6});
    g.conv("x", "c", {16, 16, 1, 1}, 1, 0, 1);
    g.unary("hardswish", "x", "later");
    g.add("c", "later", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"residual computed after the conv", g.finish({"out"}), Engine::gemm, 0});
  }
  {  // EfficientNet's squeeze-excitation gate, then the projection and its residual add: the mul
     // is folded into the 1x1 conv's weights (12 x 10 pixels >= twice the 32-column panel).
    FusionGraph g(10);
    g.input("x", {1, 24, 12, 10});
    g.input("s", {1, 24, 1, 1});
    g.input("r", {1, 20, 12, 10});
    g.mul("x", "s", "gated");
    g.conv("gated", "c", {20, 24, 1, 1}, 1, 0, 1);
    g.add("c", "r", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"channel gate + pointwise conv + residual add", g.finish({"out"}), Engine::gemm, 2});
  }
  {  // The gate as the mul's first operand, [C, 1, 1]; too few pixels (5 x 5 < 2 x 64) to fold.
    FusionGraph g(11);
    g.input("x", {1, 40, 5, 5});
    g.input("s", {40, 1, 1});
    g.mul("s", "x", "gated");
    g.conv("gated", "c", {48, 40, 1, 1}, 1, 0, 1);
    g.to_nhwc("c", "out");
    cases.push_back({"channel gate over too few pixels", g.finish({"out"}), Engine::gemm, 0});
  }
  {  // The gate as [C, 1, 1] first operand, folded.
    FusionGraph g(12);
    g.input("x", {2, 16, 8, 8});
    g.input("s", {16, 1, 1});
    g.mul("s", "x", "gated");
    g.conv("gated", "c", {16, 16, 1, 1}, 1, 0, 1, 0.0, 6.0);
    g.to_nhwc("c", "out");
    cases.push_back({"channel gate [C,1,1] first, 2 images", g.finish({"out"}), Engine::gemm, 1});
  }
  {  // MobileNetV2's depthwise conv (relu6) and projection as one step: 2 images of 7 rows (split
     // 7 : 7 at 2 threads), a last GEMM panel of 8 columns.
    FusionGraph g(13);
    g.input("x", {2, 24, 7, 9});
    g.conv("x", "d", {24, 1, 3, 3}, 1, 1, 24, 0.0, 6.0);
    g.conv("d", "p", {40, 24, 1, 1}, 1, 0, 1);
    g.to_nhwc("p", "out");
    cases.push_back({"depthwise 3x3 relu6 + pointwise", g.finish({"out"}), Engine::depthwise_pointwise, 1, 1});
  }
  {  // MobileNetV3's block without squeeze-excitation: depthwise 5x5 stride 2 + hardswish, then the
     // projection and its residual add, all one step; 7 rows (4 : 3 at 2 threads).
    FusionGraph g(14);
    g.input("x", {1, 20, 13, 11});
    g.input("r", {1, 16, 7, 6});
    g.conv("x", "d", {20, 1, 5, 5}, 2, 2, 20);
    g.unary("hardswish", "d", "h");
    g.conv("h", "p", {16, 20, 1, 1}, 1, 0, 1);
    g.add("p", "r", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"depthwise 5x5 s2 + hardswish + pointwise + residual add", g.finish({"out"}),
                     Engine::depthwise_pointwise, 3, 1, 1});
  }
  {  // Both convs' activations fused too (without one engine, the other conv still fuses its own).
    FusionGraph g(15);
    g.input("x", {1, 32, 6, 6});
    g.conv("x", "d", {32, 1, 3, 3}, 1, 1, 32);
    g.unary("hardswish", "d", "h");
    g.conv("h", "p", {24, 32, 1, 1}, 1, 0, 1);
    g.unary("silu", "p", "y");
    g.to_nhwc("y", "out");
    cases.push_back(
        {"depthwise 3x3 + hardswish + pointwise + silu", g.finish({"out"}), Engine::depthwise_pointwise, 3, 1, 1});
  }
  {  // Not fused: the depthwise output is also a graph output.
    FusionGraph g(16);
    g.input("x", {1, 16, 6, 6});
    g.conv("x", "d", {16, 1, 3, 3}, 1, 1, 16);
    g.conv("d", "p", {24, 16, 1, 1}, 1, 0, 1);
    g.to_nhwc("p", "out");
    cases.push_back(
        {"depthwise output also a graph output", g.finish({"out", "d"}), Engine::depthwise_pointwise, 0, 0});
  }
  {  // ShuffleNetV2's unit: both branches NHWC tensors computed by convs, the second through 1x1,
     // depthwise 3x3 and 1x1 convs; concat, channel shuffle, halves. The last 1x1 conv and the concat
     // (with the shuffle and the slices) join the depthwise conv's step; without our depthwise conv,
     // the reshapes, transpose and slices still join the concat's (channel_shuffle.cpp).
    FusionGraph g(17);
    g.input("x", {1, 24, 9, 8});
    g.conv("x", "x1", {24, 24, 1, 1}, 1, 0, 1, 0.0);
    g.conv("x", "a", {24, 24, 1, 1}, 1, 0, 1, 0.0);
    g.conv("a", "d", {24, 1, 3, 3}, 1, 1, 24);
    g.conv("d", "b", {24, 24, 1, 1}, 1, 0, 1, 0.0);
    g.node("concat", {"x1", "b"}, "cat", {{"axis", int64_t{1}}});
    g.node("reshape", {"cat"}, "grouped", {{"shape", Ints{1, 2, 24, 9, 8}}});
    g.node("transpose", {"grouped"}, "swapped", {{"perm", Ints{0, 2, 1, 3, 4}}});
    g.node("reshape", {"swapped"}, "s", {{"shape", Ints{1, 48, 9, 8}}});
    g.node("slice", {"s"}, "lo", {{"starts", Ints{0}}, {"ends", Ints{24}}, {"axes", Ints{1}}});
    g.node("slice", {"s"}, "hi", {{"starts", Ints{24}}, {"ends", Ints{48}}, {"axes", Ints{1}}});
    g.to_nhwc("lo", "out_lo");
    g.to_nhwc("hi", "out_hi");
    cases.push_back({"ShuffleNetV2 unit: depthwise + pointwise + channel shuffle", g.finish({"out_lo", "out_hi"}),
                     Engine::depthwise_pointwise, 5, 1, 3, 3});
  }
  {  // EfficientNet-B0's first expansion: 1x1 conv 16 -> 96 + silu, depthwise 3x3 stride 2 + silu, as
     // one step (pointwise_depthwise.h): 4.8 MB expanded, 56 output rows split 28 : 28 at 2 threads.
    FusionGraph g(18);
    g.input("x", {1, 16, 112, 112});
    g.conv("x", "e", {96, 16, 1, 1}, 1, 0, 1);
    g.unary("silu", "e", "h");
    g.conv("h", "d", {96, 1, 3, 3}, 2, 1, 96);
    g.unary("silu", "d", "y");
    g.to_nhwc("y", "out");
    cases.push_back(
        {"pointwise + silu, depthwise 3x3 s2 + silu", g.finish({"out"}), Engine::pointwise_depthwise, 3, 1, 1});
  }
  {  // MobileNetV2's: 1x1 conv with relu6, 2 images (the ring crossing from one to the next at 1
     // thread), depthwise 5x5 stride 1 + hardswish, odd channels; 2.2 MB expanded.
    FusionGraph g(19);
    g.input("x", {2, 8, 61, 40});
    g.conv("x", "e", {112, 8, 1, 1}, 1, 0, 1, 0.0, 6.0);
    g.unary("hardswish", "e", "h");
    g.conv("h", "d", {112, 1, 5, 5}, 1, 2, 112);
    g.unary("hardswish", "d", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"pointwise relu6 + hardswish, depthwise 5x5 + hardswish, 2 images", g.finish({"out"}),
                     Engine::pointwise_depthwise, 3, 1, 1});
  }
  {  // MobileNetV2's whole inverted residual block as one step: expansion (2.3 MB), depthwise 3x3 +
     // hardswish, projection and residual add.
    FusionGraph g(21);
    g.input("x", {1, 16, 80, 64});
    g.conv("x", "e", {112, 16, 1, 1}, 1, 0, 1, 0.0, 6.0);
    g.conv("e", "d", {112, 1, 3, 3}, 1, 1, 112);
    g.unary("hardswish", "d", "h");
    g.conv("h", "p", {16, 112, 1, 1}, 1, 0, 1);
    g.add("p", "x", "y");
    g.to_nhwc("y", "out");
    cases.push_back({"pointwise relu6, depthwise + hardswish, projection + residual add", g.finish({"out"}),
                     Engine::pointwise_depthwise, 4, 2, 1});
  }
  {  // Not fused: a small expansion (0.6 MB), which stays in cache between two steps.
    FusionGraph g(20);
    g.input("x", {1, 24, 28, 28});
    g.conv("x", "e", {192, 24, 1, 1}, 1, 0, 1);
    g.unary("silu", "e", "h");
    g.conv("h", "d", {192, 1, 3, 3}, 1, 1, 192);
    g.unary("silu", "d", "y");
    g.to_nhwc("y", "out");
    cases.push_back(
        {"small pointwise + silu, depthwise + silu", g.finish({"out"}), Engine::pointwise_depthwise, 2, 0, 1});
  }
  return cases;
}

// Nodes other than the graphs' last transposes that plan no step of their own (fused into a conv's,
// or views such as a reshape), and of those the convs.
struct Fused {
  size_t nodes = 0, convs = 0;
};
Fused fused_nodes(const Graph& graph, const PlanOptions& options) {
  REQUIRE(xnn_initialize(nullptr) == xnn_status_success);
  cpu::PlanBuilder builder(graph, options, nullptr);
  builder.plan_nodes();
  std::vector<bool> planned(graph.nodes.size(), false);
  for (const cpu::PlannedStep& step : builder.steps) planned.at(step.node_index) = true;
  Fused fused;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    const bool last_transpose = node.op == "transpose" && node.outputs[0].rfind("out", 0) == 0;
    if (planned[n] || last_transpose) continue;
    ++fused.nodes;
    if (node.op == "conv2d") ++fused.convs;
  }
  return fused;
}

}  // namespace

TEST_CASE("float32 conv + activation + residual add: cpu matches the reference, fused on our own engines") {
  const Backend* cpu = find_backend("cpu");
  REQUIRE(cpu != nullptr);
  const auto reference = make_reference_backend();
  std::vector<Variant> variants;
  for (const Variant& variant : option_matrix())
    if (variant.backend == "cpu" && variant.applies_to("conv2d")) variants.push_back(variant);
  Variant off = variants.front();
  off.name += ", conv_fusion off";
  off.options.conv_fusion = false;
  variants.push_back(off);
  size_t compared = 0;
  for (const FusionCase& c : fusion_cases()) {
    INFO("case '" << c.name << "'");
    const std::vector<HostArray> expected = run_case(*reference, c.built, 1);
    const size_t views = fused_nodes(c.built.graph, off.options).nodes;  // no step with fusion off either
    for (const Variant& variant : variants) {
      INFO(variant.name);
      Graph graph = c.built.graph;
      if (variant.prepack) {
        cpu->prepack(graph, *variant.prepack);
        graph.validate();
      }
      const std::vector<HostArray> actual = run_case(*cpu, CaseGraph{graph, c.built.inputs}, variant.options);
      for (size_t o = 0; o < expected.size(); ++o)
        if (auto mismatch = first_mismatch(actual[o], expected[o], 1e-4, 0))
          FAIL_CHECK("output " << o << ": " << *mismatch);
      ++compared;
      const PlanOptions& p = variant.options;
      const cpu::KernelPaths paths = cpu::plan_paths(p);  // the options, on this CPU, under its target cap
      const bool engine = c.engine == Engine::gemm        ? paths.packed_gemm
                          : c.engine == Engine::depthwise ? paths.depthwise
                          : c.engine == Engine::stem      ? paths.stem_conv
                                                          : paths.depthwise && paths.packed_gemm;
      const bool pair = c.engine == Engine::depthwise_pointwise || c.engine == Engine::pointwise_depthwise;
      const bool neither = pair && !paths.depthwise && !paths.packed_gemm;
      const size_t fusable = !paths.conv_fusion ? 0
                             : engine           ? c.fusable
                             : neither          ? c.fusable_without_both
                                                : c.fusable_without_engine;
      const Fused fused = fused_nodes(graph, p);
      CHECK(fused.nodes == views + fusable);
      CHECK(fused.convs == (engine && paths.conv_fusion ? c.fused_convs : 0));
    }
  }
  CHECK(compared >= 21 * 6);
}

}  // namespace mt::optest
