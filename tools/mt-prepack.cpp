// mt-prepack: rewrite a model into the form one backend runs directly (cpu: convolution weights in
// XNNPACK's order, activations fused, optionally channels-last inputs; vulkan: weights in the
// shaders' layouts, fp32 or fp16). The result runs only there.
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
  bool precision_given = false;
  app.add_option("--precision", options.precision, "vulkan: store the packed weights in fp32 or fp16 (the precision "
                                                   "the model then runs in)")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->each([&](const std::string&) { precision_given = true; })
      ->capture_default_str();

  return tool.run(argc, argv, [&] {
    if (precision_given && backend_name != "vulkan") mt::fail(mt::ExitCode::usage, "--precision applies to --backend vulkan only");
    const mt::Backend* backend = mt::find_backend(backend_name);
    mt::Graph graph = tool.load_model(model_path);
    const mt::passes::PrepackOutcome outcome = mt::passes::prepack(graph, *backend, options);
    spdlog::info("prepacked for {}{}: {} -> {} nodes ({} batch_norm folded, {} activations fused), inputs {}",
                 backend_name, backend_name == "vulkan" ? " " + options.precision : "", outcome.nodes_before,
                 outcome.nodes_after, outcome.batch_norms_folded, outcome.activations_fused, options.input_layout);
    tool.save_model(graph, output_path);
    return 0;
  });
}
