// fold_batch_norm: batch_norm folds into conv2d, conv_transpose2d, linear and matmul with the
// same results, and is left alone whenever folding would change what someone else sees.
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;
using Ints = std::vector<int64_t>;

// batch_norm over `channels` with constant statistics (variance kept positive).
std::string add_batch_norm(GraphBuilder& b, const std::string& x, int64_t channels, const std::string& name = "bn") {
  auto scale = b.random(name + "_scale", {channels}, 0.5f, 1.5f);
  auto bias = b.random(name + "_bias", {channels});
  auto mean = b.random(name + "_mean", {channels});
  auto var = b.random(name + "_var", {channels}, 0.2f, 2.0f);
  return b.node("batch_norm", name, {x, scale, bias, mean, var}, {{"epsilon", 1e-3}});
}

TEST_CASE("fold_batch_norm folds into conv2d with and without bias, grouped or not") {
  for (int64_t group : {1, 2, 4}) {
    for (bool with_bias : {false, true}) {
      CAPTURE(group);
      CAPTURE(with_bias);
      GraphBuilder b;
      auto x = b.input("x", {1, 4, 6, 6});
      std::vector<std::string> conv_inputs = {x, b.random("w", {4, 4 / group, 3, 3})};
      if (with_bias) conv_inputs.push_back(b.random("b", {4}));
      auto conv = b.node("conv2d", "conv", conv_inputs, {{"group", group}, {"pads", Ints{1, 1, 1, 1}}});
      auto bn = add_batch_norm(b, conv, 4);
      const Graph before = b.build({bn});
      auto [after, report] = test::apply("fold_batch_norm", before);
      REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"conv2d", 1}});
      const Node& folded = after.nodes[0];
      CHECK(folded.name == "conv");
      CHECK(folded.outputs[0] == "bn");
      CHECK(folded.inputs.size() == 3);
      CHECK_FALSE(after.has_tensor("w"));  // replaced by the folded weights
      REQUIRE(report.changes.size() == 1);
      CHECK(report.changes[0].before == std::vector<std::string>{"conv", "bn"});
      CHECK(report.changes[0].after == std::vector<std::string>{"conv"});
      CHECK(report.nodes_removed == 1);
      CHECK(report.nodes_modified == 1);
      test::check_same_results(before, after);
    }
  }
}

TEST_CASE("fold_batch_norm folds into grouped conv_transpose2d") {
  GraphBuilder b;
  auto x = b.input("x", {1, 4, 5, 5});
  // W[C=4, M/group=3, 3, 3] with group 2: 6 output channels.
  auto conv = b.node("conv_transpose2d", "deconv", {x, b.random("w", {4, 3, 3, 3}), b.random("b", {6})},
                     {{"group", int64_t{2}}, {"strides", Ints{2, 2}}});
  auto bn = add_batch_norm(b, conv, 6);
  const Graph before = b.build({bn});
  auto [after, report] = test::apply("fold_batch_norm", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"conv_transpose2d", 1}});
  test::check_same_results(before, after);
}

TEST_CASE("fold_batch_norm folds into linear, and matmul becomes linear") {
  for (bool matmul : {false, true}) {
    CAPTURE(matmul);
    GraphBuilder b;
    auto x = b.input("x", {3, 5});
    auto producer = matmul ? b.node("matmul", "fc", {x, b.random("w", {5, 4})})
                           : b.node("linear", "fc", {x, b.random("w", {4, 5}), b.random("b", {4})});
    auto bn = add_batch_norm(b, producer, 4);
    const Graph before = b.build({bn});
    auto [after, report] = test::apply("fold_batch_norm", before);
    REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"linear", 1}});
    CHECK(after.tensor(after.nodes[0].inputs[1]).shape == Shape{4, 5});
    test::check_same_results(before, after);
  }
}

TEST_CASE("fold_batch_norm leaves a conv whose output has a second reader") {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto conv = b.node("conv2d", "conv", {x, b.random("w", {2, 2, 1, 1})});
  auto bn = add_batch_norm(b, conv, 2);
  auto side = b.node("relu", "side", {conv});
  auto [after, report] = test::apply("fold_batch_norm", b.build({bn, side}));
  CHECK_FALSE(report.changed());
}

TEST_CASE("fold_batch_norm leaves a conv whose output is a graph output") {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto conv = b.node("conv2d", "conv", {x, b.random("w", {2, 2, 1, 1})});
  auto bn = add_batch_norm(b, conv, 2);
  auto [after, report] = test::apply("fold_batch_norm", b.build({bn, conv}));
  CHECK_FALSE(report.changed());
}

TEST_CASE("fold_batch_norm leaves non-constant statistics and non-constant weights") {
  {
    GraphBuilder b;
    auto x = b.input("x", {1, 2, 4, 4});
    auto mean = b.input("mean", {2});
    auto conv = b.node("conv2d", "conv", {x, b.random("w", {2, 2, 1, 1})});
    auto bn = b.node("batch_norm", "bn", {conv, b.random("s", {2}), b.random("c", {2}), mean, b.random("v", {2}, 0.5f, 1.0f)});
    auto [after, report] = test::apply("fold_batch_norm", b.build({bn}));
    CHECK_FALSE(report.changed());
  }
  {
    GraphBuilder b;
    auto x = b.input("x", {1, 2, 4, 4});
    auto w = b.input("w", {2, 2, 1, 1});
    auto conv = b.node("conv2d", "conv", {x, w});
    auto bn = add_batch_norm(b, conv, 2);
    auto [after, report] = test::apply("fold_batch_norm", b.build({bn}));
    CHECK_FALSE(report.changed());
  }
}

TEST_CASE("fold_batch_norm leaves a conv with a fused activation") {
  GraphBuilder b;
  auto x = b.input("x", {1, 2, 4, 4});
  auto conv = b.node("conv2d", "conv", {x, b.random("w", {2, 2, 1, 1})}, {{"act_min", 0.0}});
  auto bn = add_batch_norm(b, conv, 2);
  auto [after, report] = test::apply("fold_batch_norm", b.build({bn}));
  CHECK_FALSE(report.changed());
}

}  // namespace
}  // namespace mt
