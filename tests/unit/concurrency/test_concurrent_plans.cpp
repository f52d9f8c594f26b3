// One model loaded once (decoded from .mt bytes, weights used in place) and run from several
// threads at once, each with its own ExecutionPlan from the same Graph: every thread's results
// must equal, bit for bit, those of a single-threaded run on the same backend.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "lib/core/error.h"
#include "lib/format/model_file.h"
#include "tests/unit/test_graph.h"
#include "lib/runtime/backend_registry.h"

namespace mt {
namespace {

// `floats` random floats in [-1, 1) as bytes.
std::vector<std::byte> random_bytes(size_t floats, uint32_t seed) {
  const std::vector<float> values = test::random_floats(floats, seed);
  std::vector<std::byte> bytes(floats * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// x[1,3,16,16] -> conv 3x3 (8 channels) -> relu -> conv 3x3 stride 2 (16 channels) -> max pool
// -> reshape [1,256] -> linear (10 outputs): enough different kernels to share state if any did.
Graph make_model() {
  test::TestGraph g;
  std::vector<int64_t> pads{1, 1, 1, 1}, two{2, 2};
  auto h =
      g.node("conv1", "conv2d", {g.input("x", {1, 3, 16, 16}), g.constant("w1", {8, 3, 3, 3}), g.constant("b1", {8})},
             {{"pads", pads}});
  h = g.node("relu1", "relu", {h});
  h = g.node("conv2", "conv2d", {h, g.constant("w2", {16, 8, 3, 3}), g.constant("b2", {16})},
             {{"pads", pads}, {"strides", two}});
  h = g.node("pool", "max_pool2d", {h}, {{"kernel_shape", two}, {"strides", two}});
  h = g.node("flat", "reshape", {h}, {{"shape", std::vector<int64_t>{1, 256}}});
  h = g.node("fc", "linear", {h, g.constant("w3", {10, 256}), g.constant("b3", {10})});
  const Graph graph = g.finish({h});
  // Loaded once, the way the tools load it: weights point into one shared block of file bytes.
  const auto bytes = encode_model(graph);
  auto block = std::make_shared<std::vector<std::byte>>(bytes);
  InputBytes input{.owner = block, .data = block->data(), .size = block->size(), .source = "<concurrency model>"};
  return decode_model(input);
}

std::vector<std::byte> run_once(ExecutionPlan& plan, const std::vector<std::byte>& input, size_t output_bytes) {
  std::vector<std::byte> output(output_bytes);
  plan.bind_input(0, input.data());
  plan.bind_output(0, output.data());
  plan.run();
  return output;
}

void check_backend(const char* name, const PlanOptions& options = {}) {
  const Backend* backend = find_backend(name);
  REQUIRE(backend != nullptr);
  const Graph graph = make_model();
  const size_t output_bytes = 10 * sizeof(float);
  constexpr int kThreads = 4, kRunsPerThread = 8;

  // Single-threaded results, one per input seed.
  std::vector<std::vector<std::byte>> inputs, expected;
  {
    auto plan = backend->plan(graph, options);
    for (int i = 0; i < kThreads * kRunsPerThread; ++i) {
      inputs.push_back(random_bytes(3 * 16 * 16, 100 + static_cast<uint32_t>(i)));
      expected.push_back(run_once(*plan, inputs.back(), output_bytes));
    }
  }
  // Sanity: the model is not constant in its input, so equal results mean something.
  REQUIRE(expected[0] != expected[1]);

  // Every thread plans its own copy and runs a different slice of the inputs, interleaved with
  // the others; plans are made concurrently too.
  std::vector<std::vector<std::vector<std::byte>>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto plan = backend->plan(graph, options);
        for (int r = 0; r < kRunsPerThread; ++r) got[t].push_back(run_once(*plan, inputs[r * kThreads + t], output_bytes));
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("backend ", name, " thread ", t);
    CHECK(errors[t].empty());
    REQUIRE(got[t].size() == kRunsPerThread);
    for (int r = 0; r < kRunsPerThread; ++r) CHECK(got[t][r] == expected[r * kThreads + t]);
  }
}

TEST_CASE("concurrency: one graph, one plan per thread, reference backend") { check_backend("reference"); }

TEST_CASE("concurrency: one graph, one plan per thread, cpu backend at 1 and 2 threads per plan") {
  if (find_backend("cpu") == nullptr) return;  // built without XNNPACK
  check_backend("cpu", PlanOptions{.threads = 1});
  check_backend("cpu", PlanOptions{.threads = 2});
}

// Vulkan plans share the process's instance and device (queues, descriptor pools, the pipeline
// cache) across threads. Skipped without a Vulkan device, except under MT_REQUIRE_VULKAN=1
// (scripts/test.sh, CI: lavapipe), where a missing device fails.
TEST_CASE("concurrency: one graph, one plan per thread, vulkan backend") {
  const Backend* backend = find_backend("vulkan");
  if (backend == nullptr) return;  // built without Vulkan
  try {
    backend->plan(Graph{}, PlanOptions{});
  } catch (const Error& e) {
    const char* required = std::getenv("MT_REQUIRE_VULKAN");
    if (required != nullptr && std::string(required) == "1") FAIL("MT_REQUIRE_VULKAN=1 but vulkan cannot run: " << std::string(e.what()));
    MESSAGE("SKIP: vulkan not tested: " << std::string(e.what()));
    return;
  }
  check_backend("vulkan");
}

}  // namespace
}  // namespace mt
