// ShuffleNet's concat -> reshape -> transpose -> reshape (a channel shuffle of G groups) -> channel
// slices, which the cpu planner runs as one step of the concat (kernels/cpu/ops/channel_shuffle.cpp),
// float32 and int8, on the cpu backend in every cpu variant of the option matrix that changes concat
// (1 and 2 threads; our AVX-512 interleave and the portable loop) and with PlanOptions::conv_fusion
// off, against the reference backend (exact: the fused step only moves bytes). Channel counts are
// odd, groups other than 2, batches of 2, pieces longer than one vector and slices that cut groups;
// some graphs must not fuse. Each graph states which nodes the fusion plans into the concat's step,
// and the test checks that exactly those plan no step with fusion on (beyond what plans none with it
// off). Every output leaves through a transpose to NHWC, so no output reordering step is charged to
// a fused node.
#include <doctest/doctest.h>
#include <xnnpack.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/reference/reference_backend.h"
#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_runner.h"
#include "tests/ops/option_matrix.h"

namespace mt::optest {
namespace {

// A graph of float32 or int8 tensors (int8: one set of parameters, as a concat that only copies has).
class ShuffleGraph {
 public:
  ShuffleGraph(DType dtype, uint32_t seed) : dtype_(dtype), rng_(seed) {}

  void input(const std::string& name, Shape shape) {
    const int64_t count = numel(shape);
    HostArray data{
        .dtype = dtype_, .shape = shape, .data = ConstData::allocate(static_cast<size_t>(count) * dtype_size(dtype_))};
    std::uniform_int_distribution<int> values(-128, 127);
    for (int64_t i = 0; i < count; ++i) {
      if (dtype_ == DType::i8)
        reinterpret_cast<int8_t*>(data.data.mutable_data())[i] = static_cast<int8_t>(values(rng_));
      else reinterpret_cast<float*>(data.data.mutable_data())[i] = static_cast<float>(values(rng_)) / 16;
    }
    add(name);
    built_.graph.tensor(name).shape = std::move(shape);
    built_.graph.inputs.push_back(name);
    built_.inputs.push_back(std::move(data));
  }

  void node(const std::string& op, std::vector<std::string> inputs, const std::string& y, Attributes attrs = {}) {
    add(y);
    built_.graph.nodes.push_back(
        {.name = y + "_" + op, .op = op, .inputs = std::move(inputs), .outputs = {y}, .attrs = std::move(attrs)});
  }

  // y = ShuffleNet's channel_shuffle(concat(inputs), groups) of [n, c, h, w].
  void shuffle(const std::vector<std::string>& inputs, const std::string& y, Ints nchw, int64_t groups) {
    node("concat", inputs, y + "_cat", {{"axis", int64_t{1}}});
    node("reshape", {y + "_cat"}, y + "_grouped",
         {{"shape", Ints{nchw[0], groups, nchw[1] / groups, nchw[2], nchw[3]}}});
    node("transpose", {y + "_grouped"}, y + "_swapped", {{"perm", Ints{0, 2, 1, 3, 4}}});
    node("reshape", {y + "_swapped"}, y, {{"shape", nchw}});
  }

  void slice(const std::string& x, const std::string& y, Ints starts, Ints ends, Ints axes, Ints steps = {}) {
    Attributes attrs{{"starts", starts}, {"ends", ends}, {"axes", axes}};
    if (!steps.empty()) attrs["steps"] = steps;
    node("slice", {x}, y, std::move(attrs));
  }

  // The graph output `y` in NHWC order: the cpu plan's NHWC tensor leaves without a reordering step.
  void output(const std::string& y) {
    node("transpose", {y}, y + "_nhwc", {{"perm", Ints{0, 2, 3, 1}}});
    built_.graph.outputs.push_back(y + "_nhwc");
  }

  // `y` as a graph output as it is (NCHW).
  void plain_output(const std::string& y) { built_.graph.outputs.push_back(y); }

  CaseGraph finish() {
    built_.graph.infer_shapes();
    built_.graph.validate();
    return built_;
  }

 private:
  void add(const std::string& name) {
    TensorInfo info{.name = name, .dtype = dtype_};
    if (dtype_ == DType::i8) info.quant = QuantParams{{0.05f}, {3}, -1};
    built_.graph.add_tensor(std::move(info));
  }
  DType dtype_;
  std::mt19937 rng_;
  CaseGraph built_;
};

struct ShuffleCase {
  std::string name;
  CaseGraph built;
  std::set<std::string> fused;  // nodes planned into the concat's step
};

// ShuffleNet's stride-1 unit: shuffle(concat(a, b)) split into its two channel halves.
ShuffleCase unit(DType dtype, uint32_t seed, Ints nchw, int64_t groups) {
  ShuffleGraph g(dtype, seed);
  const int64_t half = nchw[1] / 2;
  g.input("a", {nchw[0], half, nchw[2], nchw[3]});
  g.input("b", {nchw[0], nchw[1] - half, nchw[2], nchw[3]});
  g.shuffle({"a", "b"}, "s", nchw, groups);
  g.slice("s", "lo", {0}, {half}, {1});
  g.slice("s", "hi", {half}, {nchw[1]}, {1});
  g.output("lo");
  g.output("hi");
  return {std::string(dtype == DType::i8 ? "int8" : "float32") + " unit " + std::to_string(nchw[1]) + " channels, " +
              std::to_string(groups) + " groups, batch " + std::to_string(nchw[0]),
          g.finish(),
          {"s_grouped_reshape", "s_swapped_transpose", "s_reshape", "lo_slice", "hi_slice"}};
}

std::vector<ShuffleCase> shuffle_cases() {
  std::vector<ShuffleCase> cases;
  for (DType dtype : {DType::f32, DType::i8}) {
    cases.push_back(unit(dtype, 1, {1, 14, 5, 3}, 2));    // halves of 7: every slice cuts a group
    cases.push_back(unit(dtype, 2, {2, 160, 6, 5}, 2));   // runs of 40: several vectors, batch 2
    cases.push_back(unit(dtype, 3, {2, 48, 28, 28}, 2));  // over 64 KiB: split over 2 threads
    cases.push_back(unit(dtype, 4, {2, 18, 3, 4}, 3));    // 3 groups of 6 over halves of 9
    cases.push_back(unit(dtype, 12, {1, 36, 2, 3}, 2));   // runs of 9: just over half a vector of floats
  }
  {  // 3 inputs of uneven widths, 3 groups (runs cross inputs), uneven slices, int8.
    ShuffleGraph g(DType::i8, 5);
    g.input("a", {1, 5, 4, 7});
    g.input("b", {1, 4, 4, 7});
    g.input("c", {1, 9, 4, 7});
    g.shuffle({"a", "b", "c"}, "s", {1, 18, 4, 7}, 3);
    g.slice("s", "x", {0}, {5}, {1});
    g.slice("s", "y", {-13}, {100}, {1});
    g.output("x");
    g.output("y");
    cases.push_back({"int8, 3 inputs, 3 groups, slices [0, 5) and [5, 18)",
                     g.finish(),
                     {"s_grouped_reshape", "s_swapped_transpose", "s_reshape", "x_slice", "y_slice"}});
  }
  {  // 4 groups; the shuffled tensor has a reader other than a slice: stored whole, float32.
    ShuffleGraph g(DType::f32, 6);
    g.input("a", {2, 12, 3, 5});
    g.input("b", {2, 8, 3, 5});
    g.shuffle({"a", "b"}, "s", {2, 20, 3, 5}, 4);
    g.slice("s", "x", {0}, {10}, {1});
    g.node("relu", {"s"}, "r");
    g.output("x");
    g.output("r");
    cases.push_back({"float32, 4 groups, shuffled tensor read by a slice and a relu",
                     g.finish(),
                     {"s_grouped_reshape", "s_swapped_transpose", "s_reshape"}});
  }
  {  // One group: the shuffle is the identity; the shuffled tensor is a graph output (stored whole).
    ShuffleGraph g(DType::f32, 7);
    g.input("a", {1, 3, 5, 5});
    g.input("b", {1, 6, 5, 5});
    g.shuffle({"a", "b"}, "s", {1, 9, 5, 5}, 1);
    g.output("s");
    cases.push_back({"float32, 1 group, shuffled tensor a graph output",
                     g.finish(),
                     {"s_grouped_reshape", "s_swapped_transpose", "s_reshape"}});
  }
  {  // Slices the fusion does not take (step 2; a spatial crop): only the shuffle is fused.
    ShuffleGraph g(DType::i8, 8);
    g.input("a", {1, 10, 4, 4});
    g.input("b", {1, 10, 4, 4});
    g.shuffle({"a", "b"}, "s", {1, 20, 4, 4}, 2);
    g.slice("s", "x", {0}, {20}, {1}, {2});
    g.slice("s", "y", {1}, {3}, {2});
    g.output("x");
    g.output("y");
    cases.push_back({"int8, slices with a step and a spatial crop",
                     g.finish(),
                     {"s_grouped_reshape", "s_swapped_transpose", "s_reshape"}});
  }
  {  // Not fusable: the concat's output has a second reader.
    ShuffleGraph g(DType::f32, 9);
    g.input("a", {1, 6, 3, 3});
    g.input("b", {1, 6, 3, 3});
    g.shuffle({"a", "b"}, "s", {1, 12, 3, 3}, 2);
    g.node("relu", {"s_cat"}, "r");
    g.output("s");
    g.output("r");
    cases.push_back({"float32, concat output read twice", g.finish(), {}});
  }
  {  // The shuffled tensor is also a graph output: stored whole, the slices planned on their own.
    ShuffleGraph g(DType::i8, 11);
    g.input("a", {1, 8, 3, 2});
    g.input("b", {1, 8, 3, 2});
    g.shuffle({"a", "b"}, "s", {1, 16, 3, 2}, 2);
    g.slice("s", "lo", {0}, {8}, {1});
    g.slice("s", "hi", {8}, {16}, {1});
    g.plain_output("s");
    g.output("lo");
    g.output("hi");
    cases.push_back({"int8 unit, shuffled tensor also a graph output",
                     g.finish(),
                     {"s_grouped_reshape", "s_swapped_transpose", "s_reshape"}});
  }
  {  // Not fusable: the transpose also swaps H and W (of equal size: the shapes match).
    ShuffleGraph g(DType::i8, 10);
    g.input("a", {1, 6, 3, 3});
    g.input("b", {1, 6, 3, 3});
    g.node("concat", {"a", "b"}, "cat", {{"axis", int64_t{1}}});
    g.node("reshape", {"cat"}, "grouped", {{"shape", Ints{1, 2, 6, 3, 3}}});
    g.node("transpose", {"grouped"}, "swapped", {{"perm", Ints{0, 2, 1, 4, 3}}});
    g.node("reshape", {"swapped"}, "s", {{"shape", Ints{1, 12, 3, 3}}});
    g.output("s");
    cases.push_back({"int8, transpose also swaps H and W", g.finish(), {}});
  }
  {  // Not fused: more groups than the pass takes (ChannelShuffle::kMaxGroups), planned node by node.
    ShuffleGraph g(DType::f32, 13);
    g.input("a", {1, 18, 2, 3});
    g.input("b", {1, 18, 2, 3});
    g.shuffle({"a", "b"}, "s", {1, 36, 2, 3}, 18);
    g.output("s");
    cases.push_back({"float32, 18 groups", g.finish(), {}});
  }
  return cases;
}

// The nodes that plan no step of their own, but for the transposes to NHWC before the outputs (the
// output's reordering step, if any, is charged to the graph's last node).
std::set<std::string> stepless_nodes(const Graph& graph, const PlanOptions& options) {
  REQUIRE(xnn_initialize(nullptr) == xnn_status_success);
  cpu::PlanBuilder builder(graph, options, nullptr);
  builder.plan_nodes();
  std::vector<bool> planned(graph.nodes.size(), false);
  for (const cpu::PlannedStep& step : builder.steps) planned.at(step.node_index) = true;
  std::set<std::string> names;
  for (size_t n = 0; n < graph.nodes.size(); ++n)
    if (!planned[n] && !graph.nodes[n].name.ends_with("_nhwc_transpose")) names.insert(graph.nodes[n].name);
  return names;
}

}  // namespace

TEST_CASE("concat + channel shuffle + channel slices: cpu matches the reference, planned as one step") {
  const Backend* cpu = find_backend("cpu");
  REQUIRE(cpu != nullptr);
  const auto reference = make_reference_backend();
  std::vector<Variant> variants;
  for (const Variant& variant : option_matrix())
    if (variant.backend == "cpu" && variant.applies_to("concat") && !variant.prepack) variants.push_back(variant);
  Variant off = variants.front();
  off.name += ", conv_fusion off";
  off.options.conv_fusion = false;
  variants.push_back(off);
  size_t compared = 0;
  for (const ShuffleCase& c : shuffle_cases()) {
    INFO("case '" << c.name << "'");
    const std::vector<HostArray> expected = run_case(*reference, c.built, 1);
    PlanOptions unfused;
    unfused.conv_fusion = false;
    const std::set<std::string> baseline = stepless_nodes(c.built.graph, unfused);
    for (const Variant& variant : variants) {
      INFO(variant.name);
      const std::vector<HostArray> actual = run_case(*cpu, c.built, variant.options);
      for (size_t o = 0; o < expected.size(); ++o)
        if (auto mismatch = first_mismatch(actual[o], expected[o], 0, 0))
          FAIL_CHECK("output " << o << ": " << *mismatch);
      ++compared;
      std::set<std::string> fused;
      for (const std::string& name : stepless_nodes(c.built.graph, variant.options))
        if (baseline.count(name) == 0) fused.insert(name);
      std::set<std::string> expected_fused;
      for (const std::string& name : c.fused)
        if (baseline.count(name) == 0 && variant.options.conv_fusion) expected_fused.insert(name);
      std::string listed;
      for (const std::string& name : fused) listed += " " + name;
      INFO("fused:" << listed);
      CHECK(fused == expected_fused);
    }
  }
  CHECK(compared >= 17 * 5);  // 17 graphs, 1 and 2 threads on both paths, conv_fusion off
}

}  // namespace mt::optest
