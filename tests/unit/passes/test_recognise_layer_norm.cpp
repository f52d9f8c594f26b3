// recognise_layer_norm: the mean/sub/pow/mean/add/sqrt/div[/mul][/add] spelling becomes one
// layer_norm with the same results; near-misses stay.
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;
using Ints = std::vector<int64_t>;

struct Spelling {
  Ints axes = {-1};
  bool square_by_mul = false;  // d * d instead of pow(d, 2)
  bool eps_first = false;      // eps + var
  bool scale = true;
  bool bias = true;
  float exponent = 2.0f;
  int64_t keepdims = 1;
  bool extra_reader_of_d = false;
};

Graph layer_norm_graph(const Spelling& s) {
  GraphBuilder b;
  auto x = b.input("x", {2, 3, 8});
  auto mean = b.node("reduce_mean", "mean", {x}, {{"axes", s.axes}, {"keepdims", s.keepdims}});
  auto d = b.node("sub", "d", {x, mean});
  auto sq = s.square_by_mul ? b.node("mul", "sq", {d, d}) : b.node("pow", "sq", {d, b.scalar("two", s.exponent)});
  auto var = b.node("reduce_mean", "var", {sq}, {{"axes", s.axes}, {"keepdims", s.keepdims}});
  auto eps = b.scalar("eps", 1e-5f);
  auto ve = b.node("add", "ve", s.eps_first ? std::vector<std::string>{eps, var} : std::vector<std::string>{var, eps});
  auto sd = b.node("sqrt", "sd", {ve});
  std::string y = b.node("div", "n", {d, sd});
  const int64_t normalised = s.axes.size() == 2 ? 24 : 8;
  const Shape param_shape = normalised == 24 ? Shape{3, 8} : Shape{8};
  if (s.scale) y = b.node("mul", "scaled", {y, b.random("gamma", param_shape, 0.5f, 1.5f)});
  if (s.bias) y = b.node("add", "shifted", {b.random("beta", param_shape), y});
  std::vector<std::string> outputs = {y};
  if (s.extra_reader_of_d) outputs.push_back(b.node("relu", "side", {d}));
  return b.build(outputs);
}

TEST_CASE("recognise_layer_norm: spellings with and without scale and bias") {
  std::vector<Spelling> spellings(6);
  spellings[1].square_by_mul = true;
  spellings[2].eps_first = true;
  spellings[3].scale = spellings[3].bias = false;
  spellings[4].scale = false;
  spellings[5].axes = {1, 2};
  for (size_t i = 0; i < spellings.size(); ++i) {
    CAPTURE(i);
    const Spelling& s = spellings[i];
    const Graph before = layer_norm_graph(s);
    auto [after, report] = test::apply("recognise_layer_norm", before);
    REQUIRE(test::op_counts(after) == std::map<std::string, size_t>{{"layer_norm", 1}});
    const Node& ln = after.nodes[0];
    CHECK(std::get<int64_t>(ln.attrs.at("axis")) == (s.axes.size() == 2 ? 1 : 2));
    CHECK(std::get<double>(ln.attrs.at("epsilon")) == doctest::Approx(1e-5));
    CHECK(ln.inputs[0] == "x");
    CHECK((ln.inputs.size() > 1 && !ln.inputs[1].empty()) == s.scale);
    CHECK((ln.inputs.size() > 2 && !ln.inputs[2].empty()) == s.bias);
    CHECK(report.changes.size() == 1);
    test::check_same_results(before, after);
  }
}

TEST_CASE("recognise_layer_norm leaves near-misses") {
  std::vector<Spelling> misses(4);
  misses[0].extra_reader_of_d = true;  // x - mean is read outside the pattern
  misses[1].exponent = 3.0f;           // not a variance
  misses[2].axes = {1};                // not the trailing axes
  misses[3].keepdims = 0;              // (this one does not even broadcast back; build fails or differs)
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    auto [after, report] = test::apply("recognise_layer_norm", layer_norm_graph(misses[i]));
    CHECK_FALSE(report.changed());
  }
}

}  // namespace
}  // namespace mt
