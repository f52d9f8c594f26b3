// The int8 nodes the VNNI planner fuses into a conv (kernels/cpu/ops/ops_int8_vnni.cpp), which the
// one-node cases of the harness cannot reach: residual connections, conv -> add, into the conv's
// output stage, and an int8 activation table (hardswish, silu, hardsigmoid) read by a depthwise
// conv alone (split by rows or by channel blocks) applied to the conv's output rows; after a GEMM
// conv (one group, gathered stem) the activation is applied by the depthwise conv that alone reads
// it, to its input rows (DeferredLookup), else it stays a node of its own; an expanding 1x1 conv
// whose output is large enough is computed row by row by the depthwise conv that reads it
// (DeferredExpand); a global average pool
// of a depthwise conv's output finishes the sums the conv formed (PooledSums). On the cpu backend
// in every cpu variant of the option matrix (1 and 2 threads, the AVX512-VNNI path and XNNPACK's,
// prepacked) against the reference backend, equal on the VNNI path and within one int8 step on
// XNNPACK's. Each graph also states how many nodes may be fused and how many pools summed, and the
// test checks that the VNNI path plans them so (no step of their own) and that XNNPACK's path never
// does. Each ends in a transpose to NHWC, so that no output reordering step is charged to the fused
// node.
#include <doctest/doctest.h>
#include <xnnpack.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/plan/kernel_paths.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/reference/reference_backend.h"
#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_runner.h"
#include "tests/ops/option_matrix.h"

namespace mt::optest {
namespace {

QuantParams per_tensor(float scale, int32_t zero_point) { return QuantParams{{scale}, {zero_point}, -1}; }

// Builds a graph of int8 tensors with seeded random data for its inputs and constants.
class ResidualGraph {
 public:
  explicit ResidualGraph(uint32_t seed) : rng_(seed) {}

  void input(const std::string& name, Shape shape, QuantParams quant) {
    HostArray data{.dtype = DType::i8, .shape = shape, .data = random_bytes(numel(shape), -128, 127)};
    built_.graph.add_tensor({.name = name, .dtype = DType::i8, .shape = std::move(shape), .quant = std::move(quant)});
    built_.graph.inputs.push_back(name);
    built_.inputs.push_back(std::move(data));
  }

  // y = conv(x) with per-channel weights (scales 0.006 .. 0.014) and an int32 bias; `group` 0 means
  // depthwise (one group per input channel).
  void conv(const std::string& x, const std::string& y, Shape w_shape, Ints strides, Ints pads, QuantParams y_quant,
            int64_t group = 1) {
    const int64_t out_channels = w_shape[0];
    QuantParams wq{.axis = 0};
    for (int64_t c = 0; c < out_channels; ++c) {
      wq.scales.push_back(0.006f + 0.002f * static_cast<float>(c % 5));
      wq.zero_points.push_back(0);
    }
    const std::string w = y + "_w", b = y + "_b";
    TensorInfo weights{.name = w, .dtype = DType::i8, .shape = w_shape, .quant = wq};
    weights.data = random_bytes(numel(w_shape), -127, 127);
    built_.graph.add_tensor(std::move(weights));
    TensorInfo bias{.name = b, .dtype = DType::i32, .shape = {out_channels}};
    bias.data = ConstData::allocate(static_cast<size_t>(out_channels) * sizeof(int32_t));
    std::uniform_int_distribution<int32_t> values(-20000, 20000);
    for (int64_t c = 0; c < out_channels; ++c) reinterpret_cast<int32_t*>(bias.data.mutable_data())[c] = values(rng_);
    built_.graph.add_tensor(std::move(bias));
    built_.graph.add_tensor({.name = y, .dtype = DType::i8});
    built_.graph.nodes.push_back({.name = y + "_conv",
                                  .op = "conv2d",
                                  .inputs = {x, w, b},
                                  .outputs = {y},
                                  .attrs = {{"strides", strides},
                                            {"pads", pads},
                                            {"dilations", Ints{1, 1}},
                                            {"group", group == 0 ? w_shape[0] : group}}});
    quants_[y] = std::move(y_quant);
  }

  void add(const std::string& a, const std::string& b, const std::string& y, QuantParams y_quant, bool relu) {
    built_.graph.add_tensor({.name = y, .dtype = DType::i8});
    Node node{.name = y + "_add", .op = "add", .inputs = {a, b}, .outputs = {y}};
    if (relu) node.attrs["act_min"] = 0.0;
    built_.graph.nodes.push_back(std::move(node));
    quants_[y] = std::move(y_quant);
  }

  // y = op(x) for an int8 hardswish, silu or hardsigmoid.
  void activation(const std::string& op, const std::string& x, const std::string& y, QuantParams y_quant) {
    built_.graph.add_tensor({.name = y, .dtype = DType::i8});
    Node node{.name = y + "_" + op, .op = op, .inputs = {x}, .outputs = {y}};
    if (op == "hardsigmoid") node.attrs = {{"alpha", 1.0 / 6}, {"beta", 0.5}};
    built_.graph.nodes.push_back(std::move(node));
    quants_[y] = std::move(y_quant);
  }

  void global_avg_pool(const std::string& x, const std::string& y, QuantParams y_quant) {
    built_.graph.add_tensor({.name = y, .dtype = DType::i8});
    built_.graph.nodes.push_back({.name = y + "_pool", .op = "global_avg_pool", .inputs = {x}, .outputs = {y}});
    quants_[y] = std::move(y_quant);
  }

  void mul(const std::string& a, const std::string& b, const std::string& y, QuantParams y_quant) {
    built_.graph.add_tensor({.name = y, .dtype = DType::i8});
    built_.graph.nodes.push_back({.name = y + "_mul", .op = "mul", .inputs = {a, b}, .outputs = {y}});
    quants_[y] = std::move(y_quant);
  }

  // y = op(inputs) for an op that moves int8 bytes (concat, reshape, transpose, slice): the first
  // input's parameters.
  void move(const std::string& op, std::vector<std::string> inputs, const std::string& y, Attributes attrs) {
    built_.graph.add_tensor({.name = y, .dtype = DType::i8});
    quants_[y] = quant_of(inputs.at(0));
    built_.graph.nodes.push_back(
        {.name = y + "_" + op, .op = op, .inputs = std::move(inputs), .outputs = {y}, .attrs = std::move(attrs)});
  }

  // out = y in NHWC order, y's parameters: the cpu plan's NHWC result leaves without a reordering
  // step, which would be charged to the graph's last node.
  void to_nhwc(const std::string& y, const std::string& out) {
    built_.graph.add_tensor({.name = out, .dtype = DType::i8});
    built_.graph.nodes.push_back({.name = out + "_transpose",
                                  .op = "transpose",
                                  .inputs = {y},
                                  .outputs = {out},
                                  .attrs = {{"perm", Ints{0, 2, 3, 1}}}});
    quants_[out] = quant_of(y);
  }

  QuantParams quant_of(const std::string& name) const {
    const auto it = quants_.find(name);
    return it != quants_.end() ? it->second : *built_.graph.tensor(name).quant;
  }

  CaseGraph finish(std::vector<std::string> outputs) {
    built_.graph.outputs = std::move(outputs);
    built_.graph.infer_shapes();
    for (const auto& [name, quant] : quants_) built_.graph.tensor(name).quant = quant;
    built_.graph.validate();
    return built_;
  }

 private:
  ConstData random_bytes(int64_t count, int low, int high) {
    ConstData data = ConstData::allocate(static_cast<size_t>(count));
    std::uniform_int_distribution<int> values(low, high);
    for (int64_t i = 0; i < count; ++i)
      reinterpret_cast<int8_t*>(data.mutable_data())[i] = static_cast<int8_t>(values(rng_));
    return data;
  }
  std::mt19937 rng_;
  CaseGraph built_;
  std::map<std::string, QuantParams> quants_;
};

struct ResidualCase {
  std::string name;
  CaseGraph built;
  size_t fusable = 0;      // adds, activations, pointwise convs and concats the VNNI path plans into a conv
  size_t conv_fusion = 0;  // of those, the ones it fuses only with conv fusion on (MT_CPU_CONV_FUSION)
  size_t pooled = 0;       // global average pools of sums a depthwise conv formed (conv fusion on)
};

std::vector<ResidualCase> residual_cases() {
  std::vector<ResidualCase> cases;
  {  // ResNet's basic block: 3x3 conv, add of the block's input, relu.
    ResidualGraph g(1);
    g.input("x", {1, 16, 9, 9}, per_tensor(0.05f, 3));
    g.input("r", {1, 24, 9, 9}, per_tensor(0.3f, -9));
    g.conv("x", "c", {24, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.4f, -5));
    g.add("c", "r", "y", per_tensor(0.5f, -128), true);
    g.to_nhwc("y", "out");
    cases.push_back({"3x3 conv + residual input, relu", g.finish({"out"}), 1});
  }
  {  // MobileNetV2's inverted residual: the 1x1 projection, the residual first, 2 images, odd channels.
    ResidualGraph g(2);
    g.input("x", {2, 21, 5, 7}, per_tensor(0.05f, -4));
    g.input("r", {2, 37, 5, 7}, per_tensor(0.2f, 6));
    g.conv("x", "c", {37, 21, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, 2));
    g.add("r", "c", "y", per_tensor(0.4f, 1), false);
    g.to_nhwc("y", "out");
    cases.push_back({"pointwise conv, add(residual, conv)", g.finish({"out"}), 1});
  }
  {  // ResNet's downsampling block: the add is fused into the later conv, the 1x1 stride-2 one.
    ResidualGraph g(3);
    g.input("x", {1, 8, 10, 10}, per_tensor(0.05f, 3));
    g.conv("x", "a", {24, 8, 3, 3}, {2, 2}, {1, 1, 1, 1}, per_tensor(0.3f, 0));
    g.conv("x", "b", {24, 8, 1, 1}, {2, 2}, {0, 0, 0, 0}, per_tensor(0.15f, -3));
    g.add("a", "b", "y", per_tensor(0.4f, -128), true);
    g.to_nhwc("y", "out");
    cases.push_back({"3x3 s2 conv + 1x1 s2 downsample conv, relu", g.finish({"out"}), 1});
  }
  {  // Not fusable: the conv's output is read again (a graph output).
    ResidualGraph g(4);
    g.input("x", {1, 16, 6, 6}, per_tensor(0.05f, 3));
    g.input("r", {1, 20, 6, 6}, per_tensor(0.3f, -9));
    g.conv("x", "c", {20, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.4f, -5));
    g.add("c", "r", "y", per_tensor(0.5f, 0), false);
    g.to_nhwc("y", "out");
    cases.push_back({"conv output also a graph output", g.finish({"out", "c"}), 0});
  }
  {  // Not fusable: the other operand is broadcast.
    ResidualGraph g(5);
    g.input("x", {1, 16, 6, 6}, per_tensor(0.05f, 3));
    g.input("r", {20, 1, 1}, per_tensor(0.3f, -9));
    g.conv("x", "c", {20, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.4f, -5));
    g.add("c", "r", "y", per_tensor(0.5f, 0), true);
    g.to_nhwc("y", "out");
    cases.push_back({"broadcast residual", g.finish({"out"}), 0});
  }
  {  // MobileNetV3's expand conv and its hardswish (left to the depthwise conv), then a depthwise conv
     // and SiLU (EfficientNet), two images, odd channels.
    ResidualGraph g(6);
    g.input("x", {2, 19, 5, 6}, per_tensor(0.05f, 3));
    g.conv("x", "c", {37, 19, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, -20));
    g.activation("hardswish", "c", "h", per_tensor(0.2f, -60));
    g.conv("h", "d", {37, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, per_tensor(0.5f, 10), 0);
    g.activation("silu", "d", "y", per_tensor(0.25f, -70));
    g.to_nhwc("y", "out");
    cases.push_back({"1x1 conv + hardswish, depthwise 3x3 s2 + silu", g.finish({"out"}), 2, 1});
  }
  {  // A gathered stem (3 channels, 7x7, more pixels than a unit: not fused) and depthwise convs: rows
     // split, and 7 rows of 96 channels, split by channel blocks at 2 threads.
    ResidualGraph g(7);
    g.input("x", {1, 3, 20, 22}, per_tensor(0.05f, 3));
    g.conv("x", "s", {21, 3, 7, 7}, {1, 1}, {3, 3, 3, 3}, per_tensor(0.6f, -5));
    g.activation("hardswish", "s", "h", per_tensor(0.3f, -80));
    g.conv("h", "d", {21, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, per_tensor(0.2f, 4), 0);
    g.activation("silu", "d", "e", per_tensor(0.15f, -60));
    g.conv("e", "p", {96, 21, 3, 3}, {3, 3}, {1, 1, 1, 1}, per_tensor(0.4f, 0));
    g.conv("p", "q", {96, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.2f, -2), 0);
    g.activation("hardsigmoid", "q", "y", per_tensor(1.0f / 255, -128));
    g.to_nhwc("y", "out");
    cases.push_back({"stem + hardswish, depthwise + silu, depthwise + hardsigmoid", g.finish({"out"}), 3, 1});
  }
  {  // A depthwise conv and the pointwise conv after it as one step (int8_depthwise_pointwise): 9
     // rows (split 5 : 4 at 2 threads), odd channels, 2 images.
    ResidualGraph g(9);
    g.input("x", {2, 27, 9, 11}, per_tensor(0.05f, -3));
    g.conv("x", "d", {27, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, 4), 0);
    g.conv("d", "y", {41, 27, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.4f, -7));
    g.to_nhwc("y", "out");
    cases.push_back({"depthwise 3x3 + pointwise", g.finish({"out"}), 1, 1});
  }
  {  // MobileNetV3's block without squeeze-excitation: depthwise 5x5 stride 2 + hardswish, the
     // pointwise projection and the residual add, all one step.
    ResidualGraph g(10);
    g.input("x", {1, 20, 13, 12}, per_tensor(0.05f, 3));
    g.input("r", {1, 24, 7, 6}, per_tensor(0.2f, -5));
    g.conv("x", "d", {20, 1, 5, 5}, {2, 2}, {2, 2, 2, 2}, per_tensor(0.3f, -10), 0);
    g.activation("hardswish", "d", "h", per_tensor(0.2f, -60));
    g.conv("h", "p", {24, 20, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, 2));
    g.add("p", "r", "y", per_tensor(0.4f, 1), false);
    g.to_nhwc("y", "out");
    cases.push_back({"depthwise 5x5 s2 + hardswish + pointwise + residual add", g.finish({"out"}), 3, 1});
  }
  {  // Not fusable: the pointwise conv has padding (it reads pixels the depthwise conv did not write).
    ResidualGraph g(11);
    g.input("x", {1, 16, 8, 8}, per_tensor(0.05f, 3));
    g.conv("x", "d", {16, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, 4), 0);
    g.conv("d", "y", {24, 16, 1, 1}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.4f, -7));
    g.to_nhwc("y", "out");
    cases.push_back({"depthwise + padded 1x1 conv", g.finish({"out"}), 0, 0});
  }
  {  // ShuffleNetV2's unit: two branches (here both 1x1 convs of the input, so that both are NHWC
     // tensors computed before the concat, as the slices of the previous unit's shuffle are), the
     // second on through 1x1, depthwise 3x3 and 1x1 convs, concat, channel shuffle and split into
     // halves again. The last 1x1 conv and the concat (with the shuffle and the slices) join the
     // depthwise conv's step. 7 rows: split 4 : 3 at 2 threads.
    ResidualGraph g(12);
    const QuantParams q = per_tensor(0.1f, -2);
    g.input("x", {1, 29, 7, 7}, per_tensor(0.05f, 3));
    g.conv("x", "x1", {29, 29, 1, 1}, {1, 1}, {0, 0, 0, 0}, q);
    g.conv("x", "a", {29, 29, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.2f, -128));
    g.conv("a", "d", {29, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, 5), 0);
    g.conv("d", "b", {29, 29, 1, 1}, {1, 1}, {0, 0, 0, 0}, q);
    g.move("concat", {"x1", "b"}, "cat", {{"axis", int64_t{1}}});
    g.move("reshape", {"cat"}, "grouped", {{"shape", Ints{1, 2, 29, 7, 7}}});
    g.move("transpose", {"grouped"}, "swapped", {{"perm", Ints{0, 2, 1, 3, 4}}});
    g.move("reshape", {"swapped"}, "s", {{"shape", Ints{1, 58, 7, 7}}});
    g.move("slice", {"s"}, "lo", {{"starts", Ints{0}}, {"ends", Ints{29}}, {"axes", Ints{1}}});
    g.move("slice", {"s"}, "hi", {{"starts", Ints{29}}, {"ends", Ints{58}}, {"axes", Ints{1}}});
    g.to_nhwc("lo", "out_lo");
    g.to_nhwc("hi", "out_hi");
    cases.push_back(
        {"ShuffleNetV2 unit: depthwise + pointwise + channel shuffle", g.finish({"out_lo", "out_hi"}), 2, 2});
  }
  {  // Not fusable: the pointwise conv's output is also a graph output.
    ResidualGraph g(13);
    g.input("x", {1, 16, 6, 6}, per_tensor(0.05f, 3));
    g.conv("x", "d", {16, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, 4), 0);
    g.conv("d", "y", {24, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.4f, -7));
    g.to_nhwc("y", "out");
    cases.push_back({"depthwise + pointwise whose depthwise output is a graph output", g.finish({"out", "d"}), 0, 0});
  }
  {  // MobileNetV3's block with squeeze-excitation, 2 images of 9 rows (split by rows): the expanding
     // conv's hardswish applied by the 5x5 depthwise conv to its input rows, the depthwise conv's
     // hardswish to its output rows, and the squeeze's pool from sums the depthwise conv formed.
    ResidualGraph g(14);
    g.input("x", {2, 24, 9, 9}, per_tensor(0.05f, 3));
    g.conv("x", "e", {40, 24, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, -20));
    g.activation("hardswish", "e", "h", per_tensor(0.2f, -60));
    g.conv("h", "d", {40, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, per_tensor(0.3f, 6), 0);
    g.activation("hardswish", "d", "a", per_tensor(0.15f, -70));
    g.global_avg_pool("a", "m", per_tensor(0.05f, -30));
    g.conv("m", "f1", {16, 40, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.1f, 0));
    g.conv("f1", "f2", {40, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.1f, 0));
    g.activation("hardsigmoid", "f2", "gate", per_tensor(1.0f / 255, -128));
    g.mul("a", "gate", "s", per_tensor(0.1f, -60));
    g.conv("s", "y", {24, 40, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, 2));
    g.to_nhwc("y", "out");
    cases.push_back({"1x1 + hardswish, depthwise 5x5 + hardswish, squeeze-excitation", g.finish({"out"}), 2, 1, 1});
  }
  {  // EfficientNet's late block: 7 rows of 96 channels (split by channel blocks at 2 threads), so the
     // input lookup and the sums cover the part's channels only.
    ResidualGraph g(15);
    g.input("x", {1, 32, 7, 7}, per_tensor(0.05f, -3));
    g.conv("x", "e", {96, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.25f, 10));
    g.activation("silu", "e", "h", per_tensor(0.12f, -90));
    g.conv("h", "d", {96, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, -4), 0);
    g.activation("silu", "d", "a", per_tensor(0.1f, -100));
    g.global_avg_pool("a", "m", per_tensor(0.04f, -50));
    g.mul("a", "m", "y", per_tensor(0.05f, 7));
    g.to_nhwc("y", "out");
    cases.push_back({"1x1 + silu, 7x7 depthwise by channel blocks + silu, pool, mul", g.finish({"out"}), 2, 1, 1});
  }
  {  // Two pools of one depthwise conv's output finish from the same sums (which neither may change).
    ResidualGraph g(20);
    g.input("x", {1, 24, 12, 10}, per_tensor(0.05f, -3));
    g.conv("x", "d", {24, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, -4), 0);
    g.activation("silu", "d", "a", per_tensor(0.1f, -100));
    g.global_avg_pool("a", "m1", per_tensor(0.04f, -50));
    g.global_avg_pool("a", "m2", per_tensor(0.02f, 10));
    g.mul("a", "m1", "y", per_tensor(0.05f, 7));
    g.to_nhwc("y", "out");
    g.to_nhwc("m2", "out_m2");
    cases.push_back({"depthwise + silu read by two pools and a mul", g.finish({"out", "out_m2"}), 1, 0, 1});
  }
  {  // The expanding conv's hardswish left to a depthwise conv that runs as one step with the
     // pointwise conv after it; the padding (input zero point) is not looked up.
    ResidualGraph g(16);
    g.input("x", {1, 12, 8, 10}, per_tensor(0.05f, 3));
    g.conv("x", "e", {36, 12, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, -20));
    g.activation("hardswish", "e", "h", per_tensor(0.2f, -60));
    g.conv("h", "d", {36, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, 5), 0);
    g.conv("d", "y", {20, 36, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.4f, -7));
    g.to_nhwc("y", "out");
    cases.push_back({"1x1 + hardswish, depthwise + pointwise", g.finish({"out"}), 2, 2});
  }
  {  // Not fusable: the activation before the depthwise conv is also a graph output.
    ResidualGraph g(17);
    g.input("x", {1, 12, 6, 6}, per_tensor(0.05f, 3));
    g.conv("x", "e", {24, 12, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, -20));
    g.activation("hardswish", "e", "h", per_tensor(0.2f, -60));
    g.conv("h", "d", {24, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, 5), 0);
    g.to_nhwc("d", "out");
    g.to_nhwc("h", "out_h");
    cases.push_back({"hardswish read by a depthwise conv and a graph output", g.finish({"out", "out_h"}), 0});
  }
  {  // MobileNetV2's inverted residual as one step: the expanding conv (144 KiB out: computed by the
     // depthwise conv's rows, two shared at 2 threads), the depthwise conv, the projection and its
     // residual add. The block's input is a conv's, NHWC (a graph input's reordering would be a step
     // charged to the expanding conv).
    ResidualGraph g(18);
    g.input("x", {1, 16, 48, 48}, per_tensor(0.05f, 3));
    g.conv("x", "a", {16, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.1f, 1));
    g.conv("a", "e", {64, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.3f, -128));
    g.conv("e", "d", {64, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.3f, -100), 0);
    g.conv("d", "p", {16, 64, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.2f, 4));
    g.add("p", "a", "y", per_tensor(0.3f, 2), false);
    g.to_nhwc("y", "out");
    cases.push_back({"expanding 1x1 + depthwise + pointwise + residual add", g.finish({"out"}), 3, 2});
  }
  {  // MobileNetV3's: the expanding conv and its hardswish computed by a 5x5 stride-2 depthwise conv
     // (+ silu), 2 images: the rows of each.
    ResidualGraph g(19);
    g.input("x", {2, 8, 40, 36}, per_tensor(0.05f, -3));
    g.conv("x", "a", {8, 8, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.1f, 1));
    g.conv("a", "e", {56, 8, 1, 1}, {1, 1}, {0, 0, 0, 0}, per_tensor(0.25f, -10));
    g.activation("hardswish", "e", "h", per_tensor(0.2f, -60));
    g.conv("h", "d", {56, 1, 5, 5}, {2, 2}, {2, 2, 2, 2}, per_tensor(0.3f, 5), 0);
    g.activation("silu", "d", "y", per_tensor(0.2f, -70));
    g.to_nhwc("y", "out");
    cases.push_back({"expanding 1x1 + hardswish, depthwise 5x5 s2 + silu, 2 images", g.finish({"out"}), 3, 2});
  }
  {  // Not fusable: the conv's output is also a graph output.
    ResidualGraph g(8);
    g.input("x", {1, 16, 6, 6}, per_tensor(0.05f, 3));
    g.conv("x", "c", {16, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, per_tensor(0.4f, -5), 0);
    g.activation("silu", "c", "y", per_tensor(0.3f, -60));
    g.to_nhwc("y", "out");
    cases.push_back({"activation of a conv output that is also a graph output", g.finish({"out", "c"}), 0});
  }
  return cases;
}

bool fusable_op(const std::string& op) {
  return op == "add" || op == "hardswish" || op == "silu" || op == "hardsigmoid" || op == "conv2d" || op == "concat";
}

struct Fusions {
  size_t fused = 0;   // adds, activations, convs and concats that plan no step of their own
  size_t pooled = 0;  // tensors whose depthwise conv formed sums for a pool
};

Fusions fusions(const Graph& graph, const PlanOptions& options) {
  REQUIRE(xnn_initialize(nullptr) == xnn_status_success);
  cpu::PlanBuilder builder(graph, options, nullptr);
  builder.plan_nodes();
  std::vector<bool> planned(graph.nodes.size(), false);
  for (const cpu::PlannedStep& step : builder.steps) planned.at(step.node_index) = true;
  Fusions found{.pooled = builder.pooled_sums.size()};
  for (size_t n = 0; n < graph.nodes.size(); ++n) found.fused += fusable_op(graph.nodes[n].op) && !planned[n] ? 1 : 0;
  return found;
}

}  // namespace

TEST_CASE(
    "int8 conv + residual add or activation: cpu matches the reference in every cpu variant, fused on the VNNI path") {
  const Backend* cpu = find_backend("cpu");
  REQUIRE(cpu != nullptr);
  const auto reference = make_reference_backend();
  const auto matrix = option_matrix();
  const auto two =
      std::find_if(matrix.begin(), matrix.end(), [](const Variant& v) { return v.name == "cpu, 2 threads"; });
  REQUIRE(two != matrix.end());
  const Variant& two_threads = *two;
  size_t compared = 0;
  for (const ResidualCase& c : residual_cases()) {
    INFO("case '" << c.name << "'");
    const std::vector<HostArray> expected = run_case(*reference, c.built, 1);
    for (const Variant& variant : option_matrix()) {
      if (variant.backend != "cpu" || !variant.applies_to("conv2d")) continue;
      INFO(variant.name);
      Graph graph = c.built.graph;
      if (variant.prepack) {
        cpu->prepack(graph, *variant.prepack);
        graph.validate();
      }
      const std::vector<HostArray> actual = run_case(*cpu, CaseGraph{graph, c.built.inputs}, variant.options);
      // The VNNI kernels and the fused add compute the reference's float32 operations: equal. XNNPACK's
      // requantization may land one step away.
      const bool vnni = cpu::plan_paths(variant.options).int8_vnni;  // permitted, on this CPU, within its target
      for (size_t o = 0; o < expected.size(); ++o)
        if (auto mismatch = first_mismatch(actual[o], expected[o], 0, vnni ? 0 : 1))
          FAIL_CHECK("output " << o << ": " << *mismatch);
      ++compared;
      const Fusions found = fusions(graph, variant.options);
      CHECK(found.fused == (vnni ? c.fusable : 0));
      CHECK(found.pooled == (vnni ? c.pooled : 0));
    }
    // Conv fusion off: the depthwise and pointwise convs plan apart, with the same results.
    PlanOptions off = two_threads.options;
    off.conv_fusion = false;
    const bool vnni = cpu::plan_paths(off).int8_vnni;
    const std::vector<HostArray> actual = run_case(*cpu, c.built, off);
    for (size_t o = 0; o < expected.size(); ++o)
      if (auto mismatch = first_mismatch(actual[o], expected[o], 0, vnni ? 0 : 1))
        FAIL_CHECK("conv fusion off, output " << o << ": " << *mismatch);
    const Fusions found = fusions(c.built.graph, off);
    CHECK(found.fused == (vnni ? c.fusable - c.conv_fusion : 0));
    CHECK(found.pooled == 0);
  }
  CHECK(compared >= 19 * 4);
}

}  // namespace mt::optest
