#include "lib/passes/pass_report.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace mt::passes {
namespace {

bool same_node(const Node& a, const Node& b) {
  return a.op == b.op && a.inputs == b.inputs && a.outputs == b.outputs && a.attrs == b.attrs;
}

std::set<std::string_view> constant_names(const Graph& graph) {
  std::set<std::string_view> names;
  for (const auto& [name, info] : graph.tensors)
    if (info.is_constant()) names.insert(name);
  return names;
}

}  // namespace

void count_differences(const Graph& before, const Graph& after, PassReport& report) {
  std::map<std::string_view, const Node*> old_nodes;
  for (const auto& node : before.nodes) old_nodes.emplace(node.name, &node);
  report.nodes_before = before.nodes.size();
  report.nodes_after = after.nodes.size();
  report.nodes_added = report.nodes_modified = 0;
  size_t kept = 0;
  for (const auto& node : after.nodes) {
    auto it = old_nodes.find(node.name);
    if (it == old_nodes.end()) {
      ++report.nodes_added;
      continue;
    }
    ++kept;
    if (!same_node(*it->second, node)) ++report.nodes_modified;
  }
  report.nodes_removed = before.nodes.size() - kept;

  const auto old_constants = constant_names(before), new_constants = constant_names(after);
  report.constants_removed = report.constants_added = 0;
  for (auto name : old_constants) report.constants_removed += !new_constants.count(name);
  for (auto name : new_constants) report.constants_added += !old_constants.count(name);
}

nlohmann::json report_json(const PassReport& report) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& change : report.changes)
    changes.push_back({{"action", change.action}, {"before", change.before}, {"after", change.after}});
  return {{"pass", report.pass},
          {"round", report.round},
          {"nodes_before", report.nodes_before},
          {"nodes_after", report.nodes_after},
          {"nodes_removed", report.nodes_removed},
          {"nodes_added", report.nodes_added},
          {"nodes_modified", report.nodes_modified},
          {"constants_removed", report.constants_removed},
          {"constants_added", report.constants_added},
          {"changes", changes}};
}

std::string report_text(const PassReport& report) {
  std::string text = fmt::format("round {} {}: {} -> {} nodes (removed {}, added {}, modified {}; constants -{} +{})\n",
                                 report.round, report.pass, report.nodes_before, report.nodes_after,
                                 report.nodes_removed, report.nodes_added, report.nodes_modified,
                                 report.constants_removed, report.constants_added);
  for (const auto& change : report.changes) {
    if (change.before.empty() && change.after.empty()) {
      text += fmt::format("  {}\n", change.action);
      continue;
    }
    text += fmt::format("  {}: {} -> {}\n", change.action,
                        change.before.empty() ? "()" : fmt::format("{}", fmt::join(change.before, " + ")),
                        change.after.empty() ? "()" : fmt::format("{}", fmt::join(change.after, " + ")));
  }
  return text;
}

}  // namespace mt::passes
