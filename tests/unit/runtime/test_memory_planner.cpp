// Memory planner: hand-checked plans, a brute-force overlap check on random lifetimes, and
// lifetimes computed from a small graph.
#include <doctest/doctest.h>

#include <random>

#include "lib/runtime/memory_planner.h"

namespace mt {
namespace {

void check_no_live_overlap(std::span<const TensorRequest> requests, const MemoryPlan& plan) {
  REQUIRE(plan.offsets.size() == requests.size());
  for (size_t a = 0; a < requests.size(); ++a) {
    CHECK(plan.offsets[a] % kArenaAlignment == 0);
    CHECK(plan.offsets[a] + requests[a].bytes <= plan.arena_bytes);
    for (size_t b = a + 1; b < requests.size(); ++b) {
      if (!requests[a].lifetime.overlaps(requests[b].lifetime) || requests[a].bytes == 0 || requests[b].bytes == 0)
        continue;
      const bool disjoint = plan.offsets[a] + requests[a].bytes <= plan.offsets[b] ||
                            plan.offsets[b] + requests[b].bytes <= plan.offsets[a];
      if (!disjoint)
        FAIL("tensors " << a << " and " << b << " are alive together and overlap: [" << plan.offsets[a] << ", +"
                        << requests[a].bytes << ") and [" << plan.offsets[b] << ", +" << requests[b].bytes << ")");
    }
  }
}

Graph chain_graph() {
  // x -> n0 -> a -> n1 -> b -> n2 -> c(output); n1 also reads x; w is a constant; n1 also writes d (unused).
  Graph graph;
  auto add = [&](const std::string& name) { graph.add_tensor({.name = name, .shape = {4}}); };
  for (const char* name : {"x", "a", "b", "c", "d"}) add(name);
  graph.add_tensor({.name = "w", .shape = {4}, .data = ConstData::allocate(16)});
  graph.inputs = {"x"};
  graph.outputs = {"c"};
  graph.nodes = {{.name = "n0", .op = "relu", .inputs = {"x"}, .outputs = {"a"}},
                 {.name = "n1", .op = "add", .inputs = {"a", "x", "w"}, .outputs = {"b", "d"}},
                 {.name = "n2", .op = "relu", .inputs = {"b"}, .outputs = {"c"}}};
  return graph;
}

}  // namespace

TEST_CASE("plan_memory: disjoint lifetimes share memory, overlapping ones do not") {
  const std::vector<TensorRequest> requests = {
      {.bytes = 100, .lifetime = {0, 1}},  // A
      {.bytes = 200, .lifetime = {1, 2}},  // B: overlaps A
      {.bytes = 100, .lifetime = {2, 3}},  // C: overlaps B, not A -> reuses A's bytes
  };
  const MemoryPlan plan = plan_memory(requests);
  // B (largest) at 0; A at 256 (200 rounded up); C fits at 256 too since A is dead by then.
  CHECK(plan.offsets[1] == 0);
  CHECK(plan.offsets[0] == 256);
  CHECK(plan.offsets[2] == 256);
  CHECK(plan.arena_bytes == 384);
  check_no_live_overlap(requests, plan);
}

TEST_CASE("plan_memory: fills a gap between live blocks") {
  const std::vector<TensorRequest> requests = {
      {.bytes = 640, .lifetime = {0, 0}},  // placed first at 0, dead after node 0
      {.bytes = 320, .lifetime = {0, 5}},  // at 640
      {.bytes = 256, .lifetime = {1, 5}},  // overlaps only the 320 block -> 0
      {.bytes = 64, .lifetime = {2, 5}},   // overlaps 320 and 256 blocks -> 256 (gap before 640)
  };
  const MemoryPlan plan = plan_memory(requests);
  CHECK(plan.offsets[0] == 0);
  CHECK(plan.offsets[1] == 640);
  CHECK(plan.offsets[2] == 0);
  CHECK(plan.offsets[3] == 256);
  CHECK(plan.arena_bytes == 960);
  check_no_live_overlap(requests, plan);
}

TEST_CASE("plan_memory: empty input and zero-byte tensors") {
  CHECK(plan_memory({}).arena_bytes == 0);
  const std::vector<TensorRequest> requests = {{.bytes = 0, .lifetime = {0, 3}}, {.bytes = 1, .lifetime = {0, 3}}};
  const MemoryPlan plan = plan_memory(requests);
  CHECK(plan.arena_bytes == 64);
  CHECK(plan.offsets[1] == 0);
}

TEST_CASE("plan_memory: random lifetimes never overlap while alive, and beat no sharing") {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t count = 1 + rng() % 60;
    const size_t nodes = 1 + rng() % 40;
    std::vector<TensorRequest> requests(count);
    size_t total = 0;
    for (auto& request : requests) {
      request.bytes = rng() % 5 == 0 ? rng() % 70 : rng() % 100000;
      request.lifetime.first = rng() % nodes;
      request.lifetime.last = request.lifetime.first + rng() % (nodes - request.lifetime.first + 1);
      total += (request.bytes + 63) / 64 * 64;
    }
    const MemoryPlan plan = plan_memory(requests);
    check_no_live_overlap(requests, plan);
    CHECK(plan.arena_bytes <= total);
    // The arena can never be smaller than the bytes alive at the busiest node.
    for (size_t node = 0; node <= nodes; ++node) {
      size_t live = 0;
      for (const auto& request : requests)
        if (request.lifetime.first <= node && node <= request.lifetime.last) live += request.bytes;
      CHECK(plan.arena_bytes >= live);
    }
  }
}

TEST_CASE("plan_memory: other alignments") {
  const std::vector<TensorRequest> requests = {{.bytes = 5, .lifetime = {0, 1}}, {.bytes = 3, .lifetime = {1, 2}}};
  const MemoryPlan plan = plan_memory(requests, 8);
  CHECK(plan.offsets[0] == 0);
  CHECK(plan.offsets[1] == 8);
  CHECK(plan.arena_bytes == 16);
  CHECK_THROWS(plan_memory(requests, 48));
}

TEST_CASE("compute_lifetimes: inputs, intermediates, outputs, unread outputs; constants skipped") {
  const Graph graph = chain_graph();
  const auto lifetimes = compute_lifetimes(graph);
  REQUIRE(lifetimes.size() == 5);
  auto find = [&](const std::string& name) {
    for (const auto& entry : lifetimes)
      if (entry.name == name) return entry;
    FAIL("no lifetime for " << name);
    return TensorLifetime{};
  };
  CHECK(lifetimes[0].name == "x");
  CHECK(find("x").graph_input);
  CHECK(find("x").lifetime.first == 0);
  CHECK(find("x").lifetime.last == 1);
  CHECK(find("a").lifetime.first == 0);
  CHECK(find("a").lifetime.last == 1);
  CHECK(find("b").lifetime.first == 1);
  CHECK(find("b").lifetime.last == 2);
  CHECK(find("d").lifetime.first == 1);
  CHECK(find("d").lifetime.last == 1);
  CHECK(find("c").graph_output);
  CHECK(find("c").lifetime.first == 2);
  CHECK(find("c").lifetime.last == 3);  // to the end: graph.nodes.size()
  CHECK_FALSE(find("a").graph_output);
}

}  // namespace mt
