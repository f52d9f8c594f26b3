// mt-prepack: rewrite a model into the form one backend runs directly (cpu: weights as the kernels
// of the CPU named by --cpu read them, activations fused, optionally channels-last inputs; vulkan:
// weights in the shaders' layouts, fp32 or fp16). The result runs only there.
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/passes/prepack.h"
#include "lib/runtime/backend_registry.h"

namespace {

// The backends built in that have a prepacked form.
std::vector<std::string> prepack_backends() {
  std::vector<std::string> names;
  for (const auto& name : mt::backend_names())
    if (mt::find_backend(name)->can_prepack()) names.push_back(name);
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  mt::cli::Tool tool("mt-prepack", "Prepare a model for one backend: weights in its kernels' layouts, activations "
                                   "fused, inputs channels-last if asked. The result runs on that backend only.");
  std::string model_path, output_path, backend_name;
  mt::PrepackOptions options;
  auto& app = tool.app();
  app.add_option("model", model_path, "Model file (.mt); default or '-': stdin")->option_text("MODEL");
  tool.add_output_option(output_path, "prepacked model");
  const std::vector<std::string> backends = prepack_backends();
  app.add_option("-b,--backend", backend_name, "Backend to prepack for (those with a prepacked form)")
      ->required()
      ->check(CLI::IsMember(backends))
      ->option_text(fmt::format("{{{}}}", fmt::join(backends, ",")));
  app.add_option("--input-layout", options.input_layout,
                 "Layout callers supply 4-D float inputs in (nhwc: channels-last, no conversion at the input)")
      ->check(CLI::IsMember({"nchw", "nhwc"}))
      ->capture_default_str();
  std::string cpu_target;
  app.add_option("--cpu", cpu_target,
                 "cpu: the CPU to store weights for, as its kernels read them (avx512: packed GEMM panels, Winograd "
                 "and int8 VNNI layouts; avx2, generic: Winograd's points; default: this machine's)")
      ->check(CLI::IsMember({"avx512", "avx2", "generic"}))
      ->option_text("{avx512,avx2,generic}");
  bool precision_given = false;
  app.add_option("--precision", options.precision, "vulkan: store the packed weights in fp32 or fp16 (the precision "
                                                   "the model then runs in)")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->each([&](const std::string&) { precision_given = true; })
      ->capture_default_str();

  return tool.run(argc, argv, [&] {
    if (precision_given && backend_name != "vulkan") mt::fail(mt::ExitCode::usage, "--precision applies to --backend vulkan only");
    if (!cpu_target.empty()) {
      if (backend_name != "cpu") mt::fail(mt::ExitCode::usage, "--cpu applies to --backend cpu only");
      options.cpu_target = mt::parse_cpu_target(cpu_target);
    }
    const mt::Backend* backend = mt::find_backend(backend_name);
    mt::Graph graph = tool.load_model(model_path);
    const mt::passes::PrepackOutcome outcome = mt::passes::prepack(graph, *backend, options);
    const auto& note = graph.metadata["prepack"];
    const std::string target = backend_name == "vulkan"  ? " " + options.precision
                               : note.contains("target") ? " " + note["target"].get<std::string>()
                                                         : "";
    spdlog::info(
        "prepacked for {}{}: {} -> {} nodes ({} batch_norm folded, {} activations fused), {} weights in the "
        "backend's layouts, inputs {}",
        backend_name, target, outcome.nodes_before, outcome.nodes_after, outcome.batch_norms_folded,
        outcome.activations_fused, note.value("weights_reordered", 0), options.input_layout);
    tool.save_model(graph, output_path);
    return 0;
  });
}
