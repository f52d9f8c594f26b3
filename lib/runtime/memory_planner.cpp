#include "lib/runtime/memory_planner.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "lib/core/error.h"

namespace mt {
namespace {

size_t align_up(size_t value, size_t alignment) {
  const size_t rounded = (value + alignment - 1) & ~(alignment - 1);
  if (rounded < value) fail(ExitCode::failure, "memory plan: tensor of {} bytes is too large", value);
  return rounded;
}

struct Placed {
  size_t offset;
  size_t end;  // offset + aligned size
};

}  // namespace

MemoryPlan plan_memory(std::span<const TensorRequest> requests, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    fail(ExitCode::failure, "internal: memory plan alignment {} is not a power of two", alignment);
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);

  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; ties by earliest start, then request order, so the plan never depends on sort stability.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    if (requests[a].lifetime.first != requests[b].lifetime.first)
      return requests[a].lifetime.first < requests[b].lifetime.first;
    return a < b;
  });

  std::vector<size_t> placed;  // request indices already given an offset
  std::vector<Placed> conflicts;
  for (size_t index : order) {
    const TensorRequest& request = requests[index];
    const size_t size = align_up(request.bytes, alignment);
    if (size == 0) continue;  // an empty tensor needs no bytes; offset 0 is as good as any
    conflicts.clear();
    for (size_t other : placed)
      if (requests[other].lifetime.overlaps(request.lifetime))
        conflicts.push_back({plan.offsets[other], plan.offsets[other] + align_up(requests[other].bytes, alignment)});
    std::sort(conflicts.begin(), conflicts.end(), [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    // Walk the live blocks by offset and take the first gap wide enough.
    size_t offset = 0;
    for (const Placed& block : conflicts) {
      if (block.offset >= offset + size) break;
      offset = std::max(offset, block.end);
    }
    plan.offsets[index] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(index);
  }
  return plan;
}

std::vector<TensorLifetime> compute_lifetimes(const Graph& graph) {
  std::vector<TensorLifetime> result;
  std::unordered_map<std::string, size_t> slot;  // tensor name -> index in result
  const size_t end = graph.nodes.size();

  auto add = [&](const std::string& name, size_t first) {
    if (name.empty() || slot.count(name) || graph.tensor(name).is_constant()) return;
    slot.emplace(name, result.size());
    result.push_back({.name = name, .lifetime = {first, first}});
  };
  for (const auto& name : graph.inputs) {
    add(name, 0);
    result[slot.at(name)].graph_input = true;
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& in : graph.nodes[i].inputs) {
      auto it = slot.find(in);
      if (it != slot.end()) result[it->second].lifetime.last = std::max(result[it->second].lifetime.last, i);
    }
    for (const auto& out : graph.nodes[i].outputs) add(out, i);
  }
  for (const auto& name : graph.outputs) {
    auto it = slot.find(name);
    if (it == slot.end()) continue;  // a constant returned as an output
    result[it->second].lifetime.last = end;
    result[it->second].graph_output = true;
  }
  return result;
}

}  // namespace mt
