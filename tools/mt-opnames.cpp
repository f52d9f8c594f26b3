// mt-opnames: list the operators a model uses (the counterpart of torch.jit.export_opnames),
// show how a model was built, and check that a backend can run every node.
#include <map>

#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/runtime/backend.h"
#include "lib/runtime/backend_registry.h"
#include "lib/runtime/prepack.h"

namespace {

using nlohmann::json;

void print_ops(const mt::Graph& graph, const std::string& format, bool counts) {
  std::map<std::string, size_t> ops;
  for (const auto& node : graph.nodes) ++ops[node.op];
  if (format == "json") {
    json out = json::object();
    if (counts) {
      out["ops"] = json::object();
      for (const auto& [op, n] : ops) out["ops"][op] = n;
    } else {
      out["ops"] = json::array();
      for (const auto& [op, n] : ops) out["ops"].push_back(op);
    }
    out["nodes"] = graph.nodes.size();
    fmt::print("{}\n", out.dump(2));
    return;
  }
  size_t width = 0;
  for (const auto& [op, n] : ops) width = std::max(width, op.size());
  for (const auto& [op, n] : ops) {
    if (format == "yaml")
      counts ? fmt::print("{}: {}\n", op, n) : fmt::print("- {}\n", op);
    else
      counts ? fmt::print("{:<{}}  {}\n", op, width, n) : fmt::print("{}\n", op);
  }
}

// " (nhwc: callers pass 1x224x224x3)" for an input mt-prepack declared channels-last.
std::string layout_note(const mt::TensorInfo& info) {
  if (info.layout.empty()) return "";
  return fmt::format(" ({}: callers pass {})", info.layout, mt::shape_str(mt::caller_shape(info)));
}

// " (prepacked: activations nhwc, inputs nchw, 52 weights reordered)" from metadata "prepack" (vulkan:
// "inputs nchw, fp16, ...").
std::string prepack_note(const mt::Graph& graph) {
  const auto it = graph.metadata.find("prepack");
  if (it == graph.metadata.end() || !it->is_object()) return "";
  // vulkan records the precision its weights are stored in, cpu the CPU they are packed for.
  std::string precision = it->contains("precision") ? ", " + it->value("precision", "?") : "";
  if (it->contains("target")) precision += ", for " + it->value("target", "?");
  return fmt::format(" (prepacked: activations {}, inputs {}{}, {} weights reordered)",
                     it->value("activation_layout", "?"), it->value("input_layout", "?"), precision,
                     it->value("weights_reordered", json(0)).dump());
}

void print_info(const mt::Graph& graph, const std::string& format) {
  size_t weight_bytes = 0, constants = 0;
  for (const auto& [name, info] : graph.tensors)
    if (info.is_constant()) {
      weight_bytes += info.data.size();
      ++constants;
    }
  auto describe = [&](const std::string& name) {
    const auto& t = graph.tensor(name);
    json entry{{"name", name}, {"dtype", mt::dtype_name(t.dtype)}, {"shape", t.shape}};
    if (!t.layout.empty()) entry["layout"] = t.layout;
    return entry;
  };
  json info = {{"inputs", json::array()}, {"outputs", json::array()}, {"nodes", graph.nodes.size()},
               {"constants", constants}, {"weight_bytes", weight_bytes}, {"metadata", graph.metadata}};
  for (const auto& name : graph.inputs) info["inputs"].push_back(describe(name));
  for (const auto& name : graph.outputs) info["outputs"].push_back(describe(name));
  if (format == "json") {
    fmt::print("{}\n", info.dump(2));
    return;
  }
  for (const char* kind : {"inputs", "outputs"})
    for (const auto& t : info[kind])
      fmt::print("{:<8} {} {} {}{}\n", std::string(kind).substr(0, std::string(kind).size() - 1) + ":",
                 t["name"].get<std::string>(), t["dtype"].get<std::string>(),
                 mt::shape_str(t["shape"].get<mt::Shape>()), layout_note(graph.tensor(t["name"].get<std::string>())));
  fmt::print("nodes:   {}\nweights: {} constants, {} bytes\n", graph.nodes.size(), constants, weight_bytes);
  if (const auto backend = mt::packed_backend(graph)) fmt::print("backend: {}{}\n", *backend, prepack_note(graph));
  if (graph.metadata.contains("provenance"))
    for (const auto& step : graph.metadata["provenance"]) {
      std::string args;
      for (const auto& a : step.value("args", json::array())) args += " " + a.get<std::string>();
      fmt::print("built:   {} {}{}\n", step.value("tool", "?"), step.value("version", "?"), args);
    }
}

int check(const mt::Graph& graph, const std::string& backend_name, const std::string& format) {
  const mt::Backend* backend = mt::find_backend(backend_name);
  if (backend == nullptr)
    mt::fail(mt::ExitCode::usage, "unknown backend '{}' (this build has: {})", backend_name,
             fmt::join(mt::backend_names(), ", "));
  const auto problems = mt::check_graph(*backend, graph);
  if (format == "json") {
    json out = {{"backend", backend_name}, {"nodes", graph.nodes.size()}, {"supported", problems.empty()},
                {"unsupported", json::array()}};
    for (const auto& p : problems) out["unsupported"].push_back({{"node", p.node}, {"op", p.op}, {"reason", p.reason}});
    fmt::print("{}\n", out.dump(2));
  } else if (problems.empty()) {
    fmt::print("{}: all {} nodes supported\n", backend_name, graph.nodes.size());
  } else {
    for (const auto& p : problems) fmt::print("{}\t{}\t{}\n", p.node, p.op, p.reason);
    fmt::print(stderr, "mt-opnames: {}: {} of {} nodes not supported\n", backend_name, problems.size(), graph.nodes.size());
  }
  return static_cast<int>(problems.empty() ? mt::ExitCode::ok : mt::ExitCode::unsupported);
}

}  // namespace

int main(int argc, char** argv) {
  mt::cli::Tool tool("mt-opnames", "List the operators a model uses, or check that a backend can run all of them.");
  std::string model_path, format = "text", backend;
  bool counts = false, info = false;
  auto& app = tool.app();
  app.add_option("model", model_path, "Model file (.mt); default or '-': stdin")->option_text("MODEL");
  app.add_flag("-c,--counts", counts, "Show how many nodes use each op");
  app.add_option("-f,--format", format, "Output format")->check(CLI::IsMember({"text", "yaml", "json"}))->capture_default_str();
  app.add_option("--check", backend, "List every node BACKEND cannot run and why; exit 4 if any")->option_text("BACKEND");
  app.add_flag("--info", info, "Show inputs, outputs, weight size, target backend and how the model was built");
  return tool.run(argc, argv, [&] {
    if (info && !backend.empty()) mt::fail(mt::ExitCode::usage, "--info and --check cannot be combined");
    if (format == "yaml" && (info || !backend.empty())) mt::fail(mt::ExitCode::usage, "--format yaml applies to the op list only");
    const mt::Graph graph = tool.load_model(model_path);
    if (!backend.empty()) return check(graph, backend, format);
    if (info) print_info(graph, format);
    else print_ops(graph, format, counts);
    return 0;
  });
}
