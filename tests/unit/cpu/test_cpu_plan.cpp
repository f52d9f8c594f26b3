// The cpu plan itself: layout helpers, the permute kernel, caller-bound inputs and outputs,
// rebinding, memory sharing, and the reasons check_node gives.
#include <numeric>

#include "kernels/cpu/plan/kernel_table.h"
#include "kernels/cpu/plan/layout.h"
#include "kernels/cpu/engines/permute.h"
#include "lib/core/error.h"
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {

using cpu::Layout;

TEST_CASE("cpu layout: memory order ignores dims of size 1") {
  CHECK(cpu::same_memory_order({1, 8, 1, 1}, cpu::nhwc_layout(), cpu::identity_layout(4)));
  CHECK(cpu::same_memory_order({2, 1, 5, 5}, cpu::nhwc_layout(), cpu::identity_layout(4)));
  CHECK_FALSE(cpu::same_memory_order({1, 8, 2, 1}, cpu::nhwc_layout(), cpu::identity_layout(4)));
  CHECK(cpu::canonical_layout({1, 8, 1, 1}, cpu::nhwc_layout()) == cpu::identity_layout(4));
  CHECK(cpu::physical_shape({1, 3, 4, 5}, cpu::nhwc_layout()) == Shape{1, 4, 5, 3});
}

TEST_CASE("cpu layout: reshape keeps bytes in place when groups stay contiguous") {
  // NHWC [1,4,3,5] -> [1,2,2,3,5]: the channel split stays innermost.
  const auto split = cpu::reshape_layout({1, 4, 3, 5}, cpu::nhwc_layout(), {1, 2, 2, 3, 5});
  REQUIRE(split);
  CHECK(*split == Layout{0, 3, 4, 1, 2});
  // Flattening NHWC C,H,W into one dim needs the data reordered.
  CHECK_FALSE(cpu::reshape_layout({1, 4, 3, 5}, cpu::nhwc_layout(), {1, 60}));
  // ... unless spatially 1x1.
  CHECK(*cpu::reshape_layout({2, 4, 1, 1}, cpu::nhwc_layout(), {2, 4}) == cpu::identity_layout(2));
  CHECK(*cpu::reshape_layout({2, 3, 4}, cpu::identity_layout(3), {6, 4}) == cpu::identity_layout(2));
}

TEST_CASE("cpu layout: transpose output layout keeps bytes in place") {
  // NCHW data stored NHWC, transposed to logical NHWC: row-major.
  CHECK(cpu::transpose_layout(cpu::nhwc_layout(), {0, 2, 3, 1}) == cpu::identity_layout(4));
  CHECK(cpu::transpose_layout(cpu::identity_layout(4), {0, 3, 1, 2}) == cpu::nhwc_layout());
  CHECK(cpu::trailing_layout(cpu::nhwc_layout(), 3) == Layout{1, 2, 0});
  CHECK(cpu::padded_layout({1, 0}, 4) == Layout{0, 1, 3, 2});
}

TEST_CASE("cpu permute: every permutation of a 4-D tensor, 1 and 4 byte elements") {
  // The second shape has dims of 2: some permutations interleave two rows (a channel shuffle).
  for (const Shape& shape : {Shape{3, 1, 5, 7}, Shape{2, 5, 2, 7}}) {
    std::vector<int> perm{0, 1, 2, 3};
    do {
      INFO("shape ", shape_str(shape), " perm ", perm[0], perm[1], perm[2], perm[3]);
      std::vector<float> in(numel(shape));
      std::iota(in.begin(), in.end(), 0.0f);
      std::vector<float> out(in.size(), -1.0f);
      cpu::Permute(shape, perm, sizeof(float)).run(in.data(), out.data(), nullptr);
      Shape out_shape(4);
      for (int k = 0; k < 4; ++k) out_shape[k] = shape[perm[k]];
      const std::vector<int64_t> in_strides{shape[1] * shape[2] * shape[3], shape[2] * shape[3], shape[3], 1};
      size_t i = 0;
      for (int64_t a = 0; a < out_shape[0]; ++a)
        for (int64_t b = 0; b < out_shape[1]; ++b)
          for (int64_t c = 0; c < out_shape[2]; ++c)
            for (int64_t d = 0; d < out_shape[3]; ++d, ++i) {
              const int64_t idx[4] = {a, b, c, d};
              int64_t source = 0;
              for (int k = 0; k < 4; ++k) source += idx[k] * in_strides[perm[k]];
              REQUIRE(out[i] == in[static_cast<size_t>(source)]);
            }
      std::vector<uint8_t> small(in.size()), small_out(in.size());
      for (size_t j = 0; j < small.size(); ++j) small[j] = static_cast<uint8_t>(in[j]);
      cpu::Permute(shape, perm, 1).run(small.data(), small_out.data(), nullptr);
      for (size_t j = 0; j < small.size(); ++j) REQUIRE(small_out[j] == static_cast<uint8_t>(out[j]));
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("cpu permute: large NCHW <-> NHWC across a pool") {
  const Shape nchw{2, 3, 67, 45};
  std::vector<float> in(numel(nchw));
  std::iota(in.begin(), in.end(), 0.0f);
  std::vector<float> nhwc(in.size()), back(in.size());
  mt::cpu::ThreadPool pool_threads(3);
  mt::cpu::ThreadPool* pool = &pool_threads;
  cpu::Permute(nchw, {0, 2, 3, 1}, 4).run(in.data(), nhwc.data(), pool);
  cpu::Permute({2, 67, 45, 3}, {0, 3, 1, 2}, 4).run(nhwc.data(), back.data(), pool);
  CHECK(nhwc[1] == in[67 * 45]);  // n=0, h=0, w=0, c=1
  CHECK(back == in);
}

TEST_CASE("cpu plan: caller-bound outputs, rebinding and reruns") {
  GraphBuilder b;
  const auto x = b.input("x", random({1, 3, 6, 6}, 1));
  const auto y = conv1x1(b, x, 3, 4, 2);
  const auto relu = b.op("relu", {y});
  b.output(relu);
  b.output(y);  // an intermediate that is also read by the relu
  b.graph.validate();
  auto plan = cpu_backend().plan(b.graph, PlanOptions{});
  const HostTensor second = random({1, 3, 6, 6}, 9);

  std::vector<float> out0(4 * 36, -7.0f), out1(4 * 36, -7.0f);
  plan->bind_output(0, out0.data());
  plan->bind_output(1, out1.data());
  const HostTensor& first = b.feeds.at("x");
  for (const HostTensor* feed : {&first, &second}) {
    plan->bind_input(0, feed->bytes.data());
    plan->run();
    std::map<std::string, HostTensor> feeds{{"x", *feed}};
    const auto expected = run_graph(reference_backend(), b.graph, feeds);
    check_close(HostTensor::of(DType::f32, {1, 4, 6, 6}, out0), expected[0], 1e-5, 1e-5);
    check_close(HostTensor::of(DType::f32, {1, 4, 6, 6}, out1), expected[1], 1e-5, 1e-5);
    CHECK(plan->output_data(0) == out0.data());
  }
  // Unbinding returns the output to plan memory.
  plan->bind_output(0, nullptr);
  plan->run();
  CHECK(plan->output_data(0) != out0.data());
  CHECK(std::memcmp(plan->output_data(0), out0.data(), out0.size() * sizeof(float)) == 0);
}

TEST_CASE("cpu plan: outputs that are inputs, views or duplicates") {
  GraphBuilder b;
  const auto x = b.input("x", random({2, 3, 4}, 1));
  const auto r = b.op("reshape", {x}, {{"shape", ints({6, 4})}});
  const auto s = b.op("sigmoid", {x});
  const auto v = b.op("reshape", {s}, {{"shape", ints({24})}});
  b.output(x);
  b.output(r);
  b.output(s);
  b.output(v);
  check_against_reference(b);
}

TEST_CASE("cpu plan: run without a bound input is an error") {
  GraphBuilder b;
  b.output(b.op("relu", {b.input("x", random({4}, 1))}));
  auto plan = cpu_backend().plan(b.graph, PlanOptions{});
  CHECK_THROWS_AS(plan->run(), Error);
}

TEST_CASE("cpu plan: tensors with disjoint lifetimes share the arena") {
  GraphBuilder b;
  std::string t = b.input("x", random({1, 8, 16, 16}, 1));
  for (int i = 0; i < 6; ++i) t = conv1x1(b, t, 8, 8, 10 + 2 * i);
  b.output(t);
  auto plan = cpu_backend().plan(b.graph, PlanOptions{});
  const MemoryStats stats = plan->memory();
  const size_t tensor = 8 * 16 * 16 * sizeof(float);
  CHECK(stats.intermediate_bytes >= 7 * tensor);
  CHECK(stats.arena_bytes <= 3 * (tensor + 128));
  CHECK(stats.weight_bytes == 6 * (64 + 8) * sizeof(float));
}

TEST_CASE("cpu plan: profile attributes time to nodes") {
  GraphBuilder b;
  b.output(b.op("relu", {conv1x1(b, b.input("x", random({1, 3, 8, 8}, 1)), 3, 4, 2)}));
  PlanOptions options;
  options.profile = true;
  auto plan = cpu_backend().plan(b.graph, options);
  plan->bind_input(0, b.feeds.at("x").bytes.data());
  plan->run();
  const auto timings = plan->last_profile();
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].node_index == 0);
  CHECK(timings[0].seconds > 0.0);
}

TEST_CASE("cpu check_node: precise reasons") {
  GraphBuilder b;
  const auto x = b.input("x", random({1, 3, 8, 8}, 1));
  const auto w = b.input("w", random({3, 4, 1, 1}, 2));
  const auto conv = b.op("conv_transpose2d", {x, w}, {{"act_min", 1.0}, {"act_max", 1.0}});
  const auto i = b.input("i", HostTensor::of(DType::i8, {4}, std::vector<int8_t>{1, 2, 3, 4}));
  const auto relu = b.op("relu", {i});
  b.output(conv);
  b.output(relu);
  const Backend& cpu = cpu_backend();
  CHECK(cpu.check_node(b.graph, b.graph.nodes[0]) == std::optional<std::string>("act_min 1 >= act_max 1 not supported"));
  CHECK(cpu.check_node(b.graph, b.graph.nodes[1]) == std::optional<std::string>("dtype int8 not supported"));
  Node unknown{.name = "u", .op = "no_such_op"};
  CHECK(cpu.check_node(b.graph, unknown) == std::optional<std::string>("op not implemented"));
  try {
    cpu.plan(b.graph, PlanOptions{});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
    CHECK(std::string(e.what()).find("act_min 1 >= act_max 1 not supported") != std::string::npos);
  }
}

TEST_CASE("cpu: every registered op has a cpu kernel") {
  for (const OpSchema* schema : all_ops()) {
    INFO(schema->name);
    CHECK(cpu::find_cpu_kernel(schema->name) != nullptr);
  }
}

}  // namespace mt::test
