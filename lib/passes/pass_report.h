// What one application of a pass changed: each rewrite with the node names before -> after, and
// node/constant counts from comparing the graph before and after. Text and JSON renderings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lib/ir/graph.h"

namespace mt::passes {

// One rewrite: the nodes it consumed and the nodes left in their place (empty `after`: removed;
// empty `before`: added; a name in both: that node was kept and changed).
struct PassChange {
  std::string action;  // "folded batch_norm into conv2d", "removed identity", ...
  std::vector<std::string> before;
  std::vector<std::string> after;
};

struct PassReport {
  std::string pass;
  int round = 0;  // 1-based round of the pipeline that applied it (0: applied on its own)
  std::vector<PassChange> changes;
  // Filled by apply_pass() from the graphs before and after.
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  size_t nodes_removed = 0;   // node names gone
  size_t nodes_added = 0;     // node names new
  size_t nodes_modified = 0;  // same name, different op, inputs, outputs or attributes
  size_t constants_removed = 0;
  size_t constants_added = 0;

  void record(std::string action, std::vector<std::string> before, std::vector<std::string> after) {
    changes.push_back({std::move(action), std::move(before), std::move(after)});
  }
  bool changed() const {
    return !changes.empty() || nodes_removed || nodes_added || nodes_modified || constants_removed || constants_added;
  }
};

// Fills the counts of `report` by comparing node names and constant names of the two graphs.
void count_differences(const Graph& before, const Graph& after, PassReport& report);

nlohmann::json report_json(const PassReport& report);
// "round 1 fold_batch_norm: 52 -> 35 nodes (removed 17, ...)" then one indented line per change.
std::string report_text(const PassReport& report);

}  // namespace mt::passes
