// The pass registry, the fixed-point pipeline, the verifier and mt-fuse's fuse(): whole blocks
// reduce to what optimize_for_mobile leaves, breakage is caught, localised and bisected.
#include "lib/passes/fuse.h"
#include "pass_test_util.h"

namespace mt {
namespace {

using test::GraphBuilder;
using Ints = std::vector<int64_t>;

std::string conv_bn(GraphBuilder& b, const std::string& name, const std::string& x, int64_t in, int64_t out,
                    int64_t kernel, int64_t group, bool relu6) {
  const int64_t pad = kernel / 2;
  auto conv = b.node("conv2d", name, {x, b.random(name + "_w", {out, in / group, kernel, kernel})},
                     {{"group", group}, {"pads", Ints{pad, pad, pad, pad}}});
  auto bn = b.node("batch_norm", name + "_bn",
                   {conv, b.random(name + "_g", {out}, 0.5f, 1.5f), b.random(name + "_b", {out}),
                    b.random(name + "_m", {out}), b.random(name + "_v", {out}, 0.5f, 2.0f)});
  if (!relu6) return bn;
  return b.node("clamp", name + "_relu6", {bn}, {{"min", 0.0}, {"max", 6.0}});
}

// An inverted-residual block as torch.onnx.export writes it in training-preserving mode, with a
// redundant identity and reshape, a classifier written as matmul + add, and dead code.
Graph mobile_block() {
  GraphBuilder b;
  auto x = b.input("x", {1, 8, 6, 6});
  auto expand = conv_bn(b, "expand", x, 8, 16, 1, 1, true);
  auto dw = conv_bn(b, "dw", expand, 16, 16, 3, 16, true);
  auto project = conv_bn(b, "project", dw, 16, 8, 1, 1, false);
  auto same = b.node("identity", "same", {project});
  auto sum = b.node("add", "residual", {x, same});
  auto pooled = b.node("reduce_mean", "pool", {sum}, {{"axes", Ints{2, 3}}, {"keepdims", int64_t{1}}});
  auto flat = b.node("flatten", "flat", {pooled});
  auto again = b.node("reshape", "again", {flat}, {{"shape", Ints{1, 8}}});
  auto logits = b.node("add", "logits", {b.node("matmul", "fc", {again, b.random("fc_w", {8, 10})}), b.random("fc_b", {10})});
  b.node("sigmoid", "unused", {logits});
  return b.build({logits});
}

TEST_CASE("select_passes: default order, explicit order, disabled, unknown names") {
  auto names = [](const std::vector<const passes::PassInfo*>& list) {
    std::vector<std::string> result;
    for (const auto* pass : list) result.emplace_back(pass->name);
    return result;
  };
  CHECK(passes::select_passes({}, {}).size() == passes::all_passes().size());
  CHECK(names(passes::select_passes({"fuse_activation", "fold_batch_norm"}, {})) ==
        std::vector<std::string>{"fuse_activation", "fold_batch_norm"});
  const auto without = names(passes::select_passes({}, {"fold_constants"}));
  CHECK(std::find(without.begin(), without.end(), "fold_constants") == without.end());
  CHECK(without.size() == passes::all_passes().size() - 1);
  try {
    passes::select_passes({"fold_batchnorm"}, {});
    FAIL("expected a usage error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(std::string(e.what()).starts_with("unknown pass 'fold_batchnorm' (passes: remove_identities, "));
  }
}

TEST_CASE("the default pipeline reduces an inverted-residual block to conv/add/pool/linear") {
  const Graph before = mobile_block();
  Graph after = before;
  const auto result = passes::run_pipeline(after, {.passes = passes::select_passes({}, {})});
  CHECK(result.converged);
  CHECK(result.rounds == 2);  // the second round finds nothing left
  CHECK(
      test::op_counts(after) ==
      std::map<std::string, size_t>{{"add", 1}, {"conv2d", 3}, {"flatten", 1}, {"global_avg_pool", 1}, {"linear", 1}});
  CHECK(std::get<double>(test::node_named(after, "expand").attrs.at("act_max")) == 6.0);
  CHECK(std::get<double>(test::node_named(after, "dw").attrs.at("act_max")) == 6.0);
  CHECK(test::node_named(after, "project").attrs.count("act_max") == 0);
  test::check_same_results(before, after);
}

TEST_CASE("the default pipeline recognises a transformer MLP written in primitives") {
  GraphBuilder b;
  auto x = b.input("x", {2, 4, 8});
  auto mean = b.node("reduce_mean", "mean", {x}, {{"axes", Ints{-1}}});
  auto d = b.node("sub", "d", {x, mean});
  auto var = b.node("reduce_mean", "var", {b.node("pow", "sq", {d, b.scalar("two", 2.0f)})}, {{"axes", Ints{-1}}});
  auto sd = b.node("sqrt", "sd", {b.node("add", "ve", {var, b.scalar("eps", 1e-5f)})});
  auto ln = b.node("add", "ln", {b.node("mul", "scaled", {b.node("div", "n", {d, sd}), b.random("gamma", {8})}), b.random("beta", {8})});
  auto h = b.node("add", "h", {b.node("matmul", "fc1", {ln, b.random("w1", {8, 16})}), b.random("b1", {16})});
  auto e = b.node("erf", "e", {b.node("div", "hd", {h, b.scalar("sqrt2", 1.4142135f)})});
  auto g = b.node("mul", "g", {b.node("mul", "hm", {h, b.node("add", "e1", {e, b.scalar("one", 1.0f)})}), b.scalar("half", 0.5f)});
  auto y = b.node("add", "y", {b.node("matmul", "fc2", {g, b.random("w2", {16, 8})}), b.random("b2", {8})});
  const Graph before = b.build({y});
  Graph after = before;
  passes::run_pipeline(after, {.passes = passes::select_passes({}, {})});
  CHECK(test::op_counts(after) == std::map<std::string, size_t>{{"gelu", 1}, {"layer_norm", 1}, {"linear", 2}});
  test::check_same_results(before, after);
}

TEST_CASE("Verifier names the diverging output and the first diverging shared tensor") {
  const Graph before = mobile_block();
  Graph broken = before;
  passes::run_pipeline(broken, {.passes = passes::select_passes({}, {})});
  // Corrupt the depthwise conv's folded weights: "dw_relu6" is the first tensor both graphs share
  // that changes (the expand stage before it is intact).
  Node& dw = const_cast<Node&>(test::node_named(broken, "dw"));
  auto weights = *passes::constant_floats(broken, dw.inputs[1]);
  weights[0] += 0.5f;
  dw.inputs[1] = passes::add_f32_constant(broken, "corrupt", broken.tensor(dw.inputs[1]).shape, weights);
  broken.remove_unused_tensors();

  const auto backend = make_reference_backend();
  passes::Verifier verifier(before, *backend, passes::verification_inputs(before, {}, 1), -1);
  Graph good = before;
  passes::run_pipeline(good, {.passes = passes::select_passes({}, {})});
  CHECK(verifier.check(good).ok());
  const auto result = verifier.check(broken);
  REQUIRE_FALSE(result.ok());
  CHECK(result.output->tensor == "logits");
  REQUIRE(result.first_tensor.has_value());
  CHECK(result.first_tensor->tensor == "dw_relu6");
  CHECK(result.message().find("first diverging tensor present in both models: 'dw_relu6'") != std::string::npos);
}

TEST_CASE("fuse: --bisect names the first application that changes results beyond tolerance") {
  Graph graph = mobile_block();
  const Graph original = graph;
  const auto backend = make_reference_backend();
  // With a zero tolerance even the rounding of folded BatchNorm weights counts as breaking the
  // model; removing the identity and the no-op reshape changes no bit. (recognise_linear is left
  // out: whether linear rounds exactly like matmul + add depends on the kernels' summation order.)
  const auto outcome =
      passes::fuse(graph, {.disabled = {"recognise_linear"}, .verifier = backend.get(), .atol = 0.0, .bisect = true});
  REQUIRE_FALSE(outcome.ok());
  CHECK(
      outcome.failure.starts_with("pass fold_batch_norm (round 1, application 10) breaks the model: output 'logits'"));
  CHECK(test::count_op(graph, "batch_norm") == 3);  // left as before the failing application
  CHECK(test::count_op(graph, "identity") == 0);    // earlier applications stay applied

  Graph again = original;
  const auto fine = passes::fuse(again, {.verifier = backend.get(), .bisect = true});
  CHECK(fine.ok());
  CHECK(fine.verification->ok());
  const auto json = fine.to_json();
  CHECK(json["nodes_before"] == original.nodes.size());
  CHECK(json["nodes_after"] == again.nodes.size());
  CHECK(json["ops_after"]["conv2d"] == 3);
  CHECK(json["converged"] == true);
  CHECK(json["verification"]["ok"] == true);
  CHECK(json["applications"].size() == 2 * passes::all_passes().size());
}

TEST_CASE("verification_inputs: seeded, smooth for images, given data used as is") {
  GraphBuilder b;
  b.input("image", {1, 2, 32, 32});
  b.input("tokens", {4}, DType::i64);
  auto y = b.node("relu", "y", {"image"});
  const Graph graph = b.build({y});
  const auto first = passes::verification_inputs(graph, {}, 5);
  const auto again = passes::verification_inputs(graph, {}, 5);
  const auto other = passes::verification_inputs(graph, {}, 6);
  REQUIRE(first.size() == 2);
  const auto bytes = [](const HostArray& a) { return std::vector<std::byte>(a.data.data(), a.data.data() + a.data.size()); };
  CHECK(bytes(first[0]) == bytes(again[0]));
  CHECK(bytes(first[0]) != bytes(other[0]));
  // Image planes vary slowly: neighbouring pixels differ far less than pixels in general (white
  // noise would give a ratio of sqrt 2; these planes, about 0.4 at this size).
  const float* v = first[0].as<float>();
  double spread = 0, step = 0;
  for (int i = 0; i < 2 * 32 * 32; ++i) spread += v[i] * v[i];
  for (int row = 0; row < 2 * 32; ++row)
    for (int x = 0; x + 1 < 32; ++x) step += std::pow(v[row * 32 + x + 1] - v[row * 32 + x], 2);
  CHECK(std::sqrt(step / (2 * 32 * 31)) < 0.6 * std::sqrt(spread / (2 * 32 * 32)));
  for (int i = 0; i < 4; ++i) CHECK((first[1].as<int64_t>()[i] == 0 || first[1].as<int64_t>()[i] == 1));

  std::vector<float> ones(2 * 32 * 32, 1.0f);
  HostArray given{.dtype = DType::f32, .shape = {1, 2, 32, 32}, .data = ConstData::copy_of(ones.data(), ones.size() * 4)};
  const auto with_data = passes::verification_inputs(graph, {{"image", given}}, 5);
  CHECK(with_data[0].as<float>()[100] == 1.0f);
}

TEST_CASE("fuse: --verify-input data of the wrong shape or for an unknown input is rejected") {
  Graph graph = mobile_block();
  const auto backend = make_reference_backend();
  HostArray wrong{.dtype = DType::f32, .shape = {1, 8}, .data = ConstData::allocate(32)};
  try {
    passes::fuse(graph, {.verifier = backend.get(), .verify_inputs = {{"x", wrong}}});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_input);
    CHECK(std::string(e.what()) == "--verify-input x: the data is float32 1x8, the model's input is float32 1x8x6x6");
  }
  try {
    passes::fuse(graph, {.verifier = backend.get(), .verify_inputs = {{"y", wrong}}});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::usage);
  }
}

}  // namespace
}  // namespace mt
