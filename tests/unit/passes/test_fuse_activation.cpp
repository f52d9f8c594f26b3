// fuse_activation: relu/clamp move into the producer's act_min/act_max (intersected with what
// it already has) with the same results; never across a shared or returned tensor.
#include <limits>

#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;

constexpr double kFloatMax = std::numeric_limits<float>::max();

double bound(const Node& node, const char* name) { return std::get<double>(node.attrs.at(name)); }

TEST_CASE("fuse_activation fuses relu and clamp into conv2d, linear, conv_transpose2d and add") {
  struct Case {
    std::string producer;
    std::string activation;
    double lo, hi;
  };
  for (const Case& c : {Case{"conv2d", "relu", 0, kFloatMax}, Case{"conv2d", "clamp", 0, 6},
                        Case{"conv_transpose2d", "relu", 0, kFloatMax}, Case{"linear", "clamp", -1, 1},
                        Case{"add", "relu", 0, kFloatMax}}) {
    CAPTURE(c.producer);
    CAPTURE(c.activation);
    GraphBuilder b;
    std::string p;
    if (c.producer == "conv2d") {
      p = b.node("conv2d", "p", {b.input("x", {1, 3, 5, 5}), b.random("w", {4, 3, 3, 3}), b.random("b", {4})});
    } else if (c.producer == "conv_transpose2d") {
      p = b.node("conv_transpose2d", "p", {b.input("x", {1, 3, 5, 5}), b.random("w", {3, 2, 3, 3})});
    } else if (c.producer == "linear") {
      p = b.node("linear", "p", {b.input("x", {2, 6}), b.random("w", {3, 6}), b.random("b", {3})});
    } else {
      p = b.node("add", "p", {b.input("x", {2, 6}), b.input("z", {2, 6})});
    }
    Attributes attrs;
    if (c.activation == "clamp") attrs = {{"min", c.lo}, {"max", c.hi}};
    auto y = b.node(c.activation, "act", {p}, attrs);
    const Graph before = b.build({y});
    auto [after, report] = test::apply("fuse_activation", before);
    REQUIRE(after.nodes.size() == 1);
    const Node& fused = after.nodes[0];
    CHECK(fused.op == c.producer);
    CHECK(fused.outputs[0] == "act");
    CHECK(bound(fused, "act_min") == c.lo);
    CHECK(bound(fused, "act_max") == c.hi);
    REQUIRE(report.changes.size() == 1);
    CHECK(report.changes[0].before == std::vector<std::string>{"p", "act"});
    test::check_same_results(before, after);
  }
}

TEST_CASE("fuse_activation intersects with bounds the producer already has") {
  GraphBuilder b;
  auto p = b.node("add", "p", {b.input("x", {8}), b.input("z", {8})}, {{"act_min", 0.0}, {"act_max", 6.0}});
  auto y = b.node("clamp", "act", {p}, {{"min", -1.0}, {"max", 4.0}});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("fuse_activation", before);
  REQUIRE(after.nodes.size() == 1);
  CHECK(bound(after.nodes[0], "act_min") == 0.0);
  CHECK(bound(after.nodes[0], "act_max") == 4.0);
  test::check_same_results(before, after);
}

TEST_CASE("fuse_activation merges relu and clamp chains into one clamp") {
  GraphBuilder b;
  auto p = b.node("mul", "p", {b.input("x", {8}), b.input("z", {8})});
  auto r = b.node("relu", "r", {p});
  auto y = b.node("clamp", "act", {r}, {{"min", -1.0}, {"max", 4.0}});
  const Graph before = b.build({y});
  auto [after, report] = test::apply("fuse_activation", before);
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"clamp", 1}, {"mul", 1}});
  const Node& merged = test::node_named(after, "r");
  CHECK(merged.op == "clamp");
  CHECK(bound(merged, "min") == 0.0);
  CHECK(bound(merged, "max") == 4.0);
  CHECK(merged.outputs[0] == "act");
  REQUIRE(report.changes.size() == 1);
  CHECK(report.changes[0].action == "merged clamp into relu");
  test::check_same_results(before, after);
}

TEST_CASE("fuse_activation leaves disjoint bounds, shared and returned producers, other activations") {
  auto unchanged = [](const Graph& graph) {
    auto [after, report] = test::apply("fuse_activation", graph);
    CHECK_FALSE(report.changed());
    CHECK(after.nodes.size() == graph.nodes.size());
  };
  {  // clamp(clamp(x, 0, 1), 2, 3) is the constant 2, not an intersection
    GraphBuilder b;
    auto p = b.node("add", "p", {b.input("x", {4}), b.input("z", {4})}, {{"act_min", 0.0}, {"act_max", 1.0}});
    unchanged(b.build({b.node("clamp", "act", {p}, {{"min", 2.0}, {"max", 3.0}})}));
  }
  {  // the add's output is also a graph output
    GraphBuilder b;
    auto p = b.node("add", "p", {b.input("x", {4}), b.input("z", {4})});
    unchanged(b.build({b.node("relu", "act", {p}), p}));
  }
  {  // the conv's output has a second reader
    GraphBuilder b;
    auto p = b.node("conv2d", "p", {b.input("x", {1, 2, 3, 3}), b.random("w", {2, 2, 1, 1})});
    unchanged(b.build({b.node("relu", "act", {p}), b.node("sigmoid", "side", {p})}));
  }
  {  // only clamp-like activations are what the kernels apply
    GraphBuilder b;
    auto p = b.node("conv2d", "p", {b.input("x", {1, 2, 3, 3}), b.random("w", {2, 2, 1, 1})});
    unchanged(b.build({b.node("leaky_relu", "act", {p})}));
  }
  {  // a Clip with non-constant bounds can only be max/min with tensors in the IR: not a clamp
    GraphBuilder b;
    auto p = b.node("conv2d", "p", {b.input("x", {1, 2, 3, 3}), b.random("w", {2, 2, 1, 1})});
    auto low = b.input("low", {1});
    unchanged(b.build({b.node("max", "act", {p, low})}));
  }
  {  // mul is not a producer with fused bounds
    GraphBuilder b;
    auto p = b.node("mul", "p", {b.input("x", {4}), b.input("z", {4})});
    unchanged(b.build({b.node("relu", "act", {p})}));
  }
}

}  // namespace
}  // namespace mt
