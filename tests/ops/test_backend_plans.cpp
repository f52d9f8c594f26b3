// Execution plans of every built backend on small multi-node graphs: bound and unbound outputs,
// rebinding between runs, tensors read after they are returned, outputs that are graph inputs or
// constants, liveness sharing in the arena, profiling, and no heap allocation inside run().
// GCC pairs the replaced operator new with free() inside inlined standard containers and warns;
// the pairing is correct (both sides use malloc/free).
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <new>

#include "kernels/reference/reference_backend.h"
#include "lib/core/error.h"
#include "lib/runtime/backend_registry.h"
#include "tests/ops/op_runner.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};
}  // namespace

// Counts heap allocations while g_counting is set (this binary only).
void* operator new(size_t size) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace mt {
namespace {

TensorInfo f32(const std::string& name, Shape shape) { return {.name = name, .dtype = DType::f32, .shape = std::move(shape)}; }

// x -> relu -> a -> sigmoid -> b -> add(b, x) -> c -> neg -> d (output)
//                               b is also an output; e = mul(d, w) is an output; w is constant.
Graph chain_graph() {
  Graph g;
  for (const char* name : {"x", "a", "b", "c", "d", "e"}) g.add_tensor(f32(name, {1, 3, 4, 4}));
  TensorInfo w = f32("w", {3, 1, 1});
  w.data = ConstData::allocate(12);
  const float weights[3] = {0.5f, -2.0f, 3.0f};
  std::memcpy(w.data.mutable_data(), weights, 12);
  g.add_tensor(std::move(w));
  g.inputs = {"x"};
  g.outputs = {"d", "b", "e"};
  g.nodes = {{.name = "n0", .op = "relu", .inputs = {"x"}, .outputs = {"a"}},
             {.name = "n1", .op = "sigmoid", .inputs = {"a"}, .outputs = {"b"}},
             {.name = "n2", .op = "add", .inputs = {"b", "x"}, .outputs = {"c"}},
             {.name = "n3", .op = "neg", .inputs = {"c"}, .outputs = {"d"}},
             {.name = "n4", .op = "mul", .inputs = {"d", "w"}, .outputs = {"e"}}};
  g.validate();
  return g;
}

std::vector<float> input_values(float offset) {
  std::vector<float> x(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f + offset;
  return x;
}

// The expected outputs computed by hand from the definitions.
void expected_outputs(const std::vector<float>& x, std::vector<float>& d, std::vector<float>& b, std::vector<float>& e) {
  const float w[3] = {0.5f, -2.0f, 3.0f};
  d.resize(48), b.resize(48), e.resize(48);
  for (size_t i = 0; i < 48; ++i) {
    b[i] = 1.0f / (1.0f + std::exp(-std::max(x[i], 0.0f)));
    d[i] = -(b[i] + x[i]);
    e[i] = d[i] * w[i / 16];
  }
}

void check_close(const float* actual, const std::vector<float>& expected, const std::string& what) {
  for (size_t i = 0; i < expected.size(); ++i)
    if (std::abs(actual[i] - expected[i]) > 1e-5f) FAIL_CHECK(what << "[" << i << "]: " << actual[i] << " vs " << expected[i]);
}

std::vector<const Backend*> all_backends() {
  std::vector<const Backend*> backends;
  for (const auto& name : backend_names()) backends.push_back(find_backend(name));
  return backends;
}

}  // namespace

TEST_CASE("plans: bound and unbound outputs, rebinding, reuse across runs") {
  const Graph graph = chain_graph();
  for (const Backend* backend : all_backends()) {
    INFO("backend ", std::string(backend->name()));
    auto plan = backend->plan(graph, {});
    std::vector<float> x1 = input_values(0), x2 = input_values(0.25f);
    std::vector<float> d_out(48, -99), e_out(48, -99), d, b, e;
    plan->bind_input(0, x1.data());
    plan->bind_output(0, d_out.data());
    plan->bind_output(2, e_out.data());  // output 1 (b) stays in plan memory
    plan->run();
    expected_outputs(x1, d, b, e);
    check_close(d_out.data(), d, "d");
    check_close(e_out.data(), e, "e");
    check_close(static_cast<const float*>(plan->output_data(1)), b, "b (unbound)");
    CHECK(plan->output_data(0) == d_out.data());

    // Same plan, new input buffer, outputs rebound elsewhere.
    std::vector<float> d_out2(48, -99);
    plan->bind_input(0, x2.data());
    plan->bind_output(0, d_out2.data());
    plan->run();
    expected_outputs(x2, d, b, e);
    check_close(d_out2.data(), d, "d after rebinding");
    check_close(e_out.data(), e, "e after rebinding");
    check_close(static_cast<const float*>(plan->output_data(1)), b, "b after rebinding");
    check_close(d_out.data(), [&] { std::vector<float> first; std::vector<float> bb, ee; expected_outputs(x1, first, bb, ee); return first; }(),
                "the first output buffer is left alone");

    // Input data changed in place between runs is picked up (bindings are pointers, not copies).
    for (auto& v : x2) v = -v;
    plan->run();
    expected_outputs(x2, d, b, e);
    check_close(d_out2.data(), d, "d after changing the bound input in place");

    // With reuse_unchanged_inputs, an input is read again only once it is bound again: vulkan keeps
    // its last copy on the device (so data changed in place is not seen until then); backends that
    // read caller memory see every change.
    plan->reuse_unchanged_inputs(true);
    const std::vector<float> before = x2;
    for (auto& v : x2) v = -v;
    plan->run();
    expected_outputs(backend->name() == "vulkan" ? before : x2, d, b, e);
    check_close(d_out2.data(), d, "d with the input reused");
    plan->bind_input(0, x2.data());
    plan->run();
    expected_outputs(x2, d, b, e);
    check_close(d_out2.data(), d, "d after binding the changed input again");
    plan->reuse_unchanged_inputs(false);

    const MemoryStats stats = plan->memory();
    CHECK(stats.weight_bytes == 12);
    CHECK(stats.intermediate_bytes >= 5 * 192);
  }
}

TEST_CASE("reference plan: liveness shares the arena, profile times every node") {
  const Graph graph = chain_graph();
  const auto reference = make_reference_backend();
  PlanOptions options;
  options.profile = true;
  auto plan = reference->plan(graph, options);
  const MemoryStats stats = plan->memory();
  CHECK(stats.intermediate_bytes == 5 * 192);
  // a dies at n1 and c dies at n3, so they share with later tensors: at most b, d, e and one of
  // a/c are alive together.
  CHECK(stats.arena_bytes <= 4 * 192);
  std::vector<float> x = input_values(0);
  plan->bind_input(0, x.data());
  plan->run();
  const auto timings = plan->last_profile();
  REQUIRE(timings.size() == graph.nodes.size());
  for (size_t i = 0; i < timings.size(); ++i) {
    CHECK(timings[i].node_index == i);
    CHECK(timings[i].seconds >= 0);
  }
  CHECK(reference->plan(graph, {})->last_profile().empty());
}

TEST_CASE("plans: a graph input or a constant returned as an output") {
  Graph g;
  g.add_tensor(f32("x", {4}));
  g.add_tensor(f32("y", {4}));
  TensorInfo k = f32("k", {2});
  const float kv[2] = {7, 8};
  k.data = ConstData::copy_of(kv, 8);
  g.add_tensor(std::move(k));
  // An int64 constant (a Shape folded at import): every backend returns it exactly, vulkan too.
  TensorInfo shape{.name = "shape", .dtype = DType::i64, .shape = {3}};
  const int64_t shape_values[3] = {1, 3, int64_t{1} << 40};
  shape.data = ConstData::copy_of(shape_values, sizeof shape_values);
  g.add_tensor(std::move(shape));
  g.inputs = {"x"};
  g.outputs = {"y", "x", "k", "shape"};
  g.nodes = {{.name = "n", .op = "abs", .inputs = {"x"}, .outputs = {"y"}}};
  g.validate();
  for (const Backend* backend : all_backends()) {
    INFO("backend ", std::string(backend->name()));
    auto plan = backend->plan(g, {});
    const float x[4] = {-1, 2, -3, 4};
    float y[4] = {}, x_copy[4] = {}, k_copy[2] = {};
    plan->bind_input(0, x);
    plan->bind_output(0, y);
    plan->bind_output(1, x_copy);
    plan->bind_output(2, k_copy);
    plan->run();
    CHECK(y[2] == 3);
    CHECK(x_copy[2] == -3);
    CHECK(k_copy[1] == 8);
    const auto* shape_out = static_cast<const int64_t*>(plan->output_data(3));  // unbound: the plan's copy
    CHECK(shape_out[2] == int64_t{1} << 40);
    int64_t shape_copy[3] = {};
    plan->bind_output(3, shape_copy);
    plan->run();
    CHECK(shape_copy[1] == 3);
  }
}

TEST_CASE("plans: unbound inputs and unsupported nodes are errors") {
  const Graph graph = chain_graph();
  const auto reference = make_reference_backend();
  auto plan = reference->plan(graph, {});
  CHECK_THROWS_AS(plan->run(), Error);

  Graph unknown = graph;
  unknown.nodes[2].op = "no_such_op";  // not validated: the plan must still refuse it by name
  try {
    reference->plan(unknown, {});
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
    CHECK(std::string(e.what()) == "backend 'reference' cannot run 1 node: n2 (no_such_op: op not implemented)");
  }
}

TEST_CASE("run() allocates nothing on the heap") {
  // Every backend on the chain graph. The reference backend's own run loop allocates nothing,
  // but its kernels are plain C++ that may build small index vectors (broadcast strides), so
  // it is checked on a graph of element-wise unary ops only.
  Graph unary;
  for (const char* name : {"x", "a", "b", "d"}) unary.add_tensor(f32(name, {1, 3, 4, 4}));
  unary.inputs = {"x"};
  unary.outputs = {"d"};
  unary.nodes = {{.name = "n0", .op = "relu", .inputs = {"x"}, .outputs = {"a"}},
                 {.name = "n1", .op = "sigmoid", .inputs = {"a"}, .outputs = {"b"}},
                 {.name = "n2", .op = "neg", .inputs = {"b"}, .outputs = {"d"}}};
  unary.validate();
  const Graph chain = chain_graph();
  for (const Backend* backend : all_backends()) {
    const bool is_reference = backend->name() == "reference";
    const Graph& graph = is_reference ? unary : chain;
    INFO("backend ", std::string(backend->name()));
    for (int threads : {1, 2}) {
      PlanOptions options;
      options.threads = threads;
      options.profile = threads == 2;
      auto plan = backend->plan(graph, options);
      std::vector<float> x = input_values(0), d(48), e(48);
      plan->bind_input(0, x.data());
      plan->bind_output(0, d.data());
      if (graph.outputs.size() > 2) plan->bind_output(2, e.data());
      plan->run();  // a first run may warm caches; the check is on the steady state
      g_allocations = 0;
      g_counting = true;
      plan->run();
      plan->run();
      g_counting = false;
      CHECK(g_allocations.load() == 0);
    }
  }
}

}  // namespace mt
