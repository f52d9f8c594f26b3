// Liveness-based memory planning: every intermediate tensor gets an offset in one arena so that
// tensors alive at the same time never share bytes, while tensors with disjoint lifetimes do.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "lib/ir/graph.h"

namespace mt {

inline constexpr size_t kArenaAlignment = 64;

// Inclusive range of node indices during which a tensor's bytes must stay intact: from the node
// that writes it to the last node that reads it.
struct Lifetime {
  size_t first = 0;
  size_t last = 0;
  bool overlaps(const Lifetime& other) const { return first <= other.last && other.first <= last; }
};

struct TensorRequest {
  size_t bytes = 0;
  Lifetime lifetime;
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per request, in request order; multiples of the alignment
  size_t arena_bytes = 0;       // size of the arena (a multiple of the alignment)
};

// Greedy by size: the largest tensors are placed first, each at the lowest aligned offset where it
// does not collide with an already placed tensor whose lifetime overlaps its own. Deterministic.
// `alignment` must be a power of two.
MemoryPlan plan_memory(std::span<const TensorRequest> requests, size_t alignment = kArenaAlignment);

// A non-constant tensor of a graph with the node range in which it is alive. Graph inputs are
// alive from node 0; node outputs from their producer. They stay alive until their last reader;
// graph outputs until graph.nodes.size() (after the last node); a node output nobody reads only
// at its producer.
struct TensorLifetime {
  std::string name;
  Lifetime lifetime;
  bool graph_input = false;
  bool graph_output = false;
};

// Every non-constant tensor the graph uses: graph inputs in order, then node outputs in node
// order. The graph must be valid (validate()).
std::vector<TensorLifetime> compute_lifetimes(const Graph& graph);

}  // namespace mt
