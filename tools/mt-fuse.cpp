// mt-fuse: optimise a model with graph passes (BatchNorm folding, activation fusion, constant
// folding, clean-up, pattern recognition), verified against the original on the reference backend.
#include <spdlog/spdlog.h>

#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/io/npy.h"
#include "lib/passes/fuse.h"
#include "lib/runtime/backend_registry.h"

namespace {

void list_passes() {
  size_t width = 0;
  for (const auto& pass : mt::passes::all_passes()) width = std::max(width, pass.name.size());
  for (const auto& pass : mt::passes::all_passes()) fmt::print("{:<{}}  {}\n", pass.name, width, pass.description);
}

// "NAME=FILE.npy" -> (NAME, the array).
std::pair<std::string, mt::HostArray> parse_verify_input(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    mt::fail(mt::ExitCode::usage, "--verify-input expects NAME=FILE.npy, got '{}'", spec);
  return {spec.substr(0, eq), mt::read_npy(spec.substr(eq + 1))};
}

}  // namespace

int main(int argc, char** argv) {
  mt::cli::Tool tool("mt-fuse", "Optimise a model: fold BatchNorm and constants, fuse activations, remove no-ops, "
                                "recognise LayerNorm/GELU/SiLU/HardSwish, and check the result still matches.");
  std::string model_path, output_path, report_path;
  std::vector<std::string> passes, disabled, verify_inputs;
  bool list = false, no_verify = false, bisect = false;
  double atol = -1;
  auto& app = tool.app();
  app.add_option("model", model_path, "Model file (.mt); default or '-': stdin")->option_text("MODEL");
  tool.add_output_option(output_path, "optimised model");
  app.add_option("--passes", passes, "Run only these passes, in this order (comma-separated)")
      ->delimiter(',')
      ->option_text("A,B,...");
  app.add_option("--disable", disabled, "Leave these passes out (comma-separated)")->delimiter(',')->option_text("X,Y");
  app.add_flag("--list-passes", list, "List the passes of the default pipeline, in order, and exit");
  auto* report = app.add_option("--report", report_path,
                                "Report what each pass changed: as text on stderr, or as JSON to FILE.json")
                     ->expected(0, 1)
                     ->option_text("[FILE.json]");
  app.add_flag("--no-verify", no_verify, "Skip running the model before and after on the reference backend");
  app.add_option("--verify-input", verify_inputs, "Verify with this data for input NAME instead of seeded random values")
      ->option_text("NAME=FILE.npy");
  app.add_option("--atol", atol, "Absolute tolerance of the check (default: 1e-4 x the range of each tensor + 1e-6)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("X");
  app.add_flag("--bisect", bisect, "Verify after every pass application; name the first one that breaks the model");

  return tool.run(argc, argv, [&] {
    if (list) {
      list_passes();
      return 0;
    }
    if (no_verify && (bisect || !verify_inputs.empty() || atol >= 0))
      mt::fail(mt::ExitCode::usage, "--no-verify cannot be combined with --bisect, --verify-input or --atol");
    // A --report value that is not a .json file is almost certainly the model argument it swallowed.
    if (!report_path.empty() && !report_path.ends_with(".json"))
      mt::fail(mt::ExitCode::usage,
               "--report FILE must name a .json file, got '{}' (for a text report put --report after the model)",
               report_path);

    mt::passes::FuseOptions options{.passes = passes, .disabled = disabled, .atol = atol, .bisect = bisect};
    mt::passes::select_passes(passes, disabled);  // unknown names fail before the model is read
    if (!no_verify) {
      options.verifier = mt::find_backend("reference");
      if (options.verifier == nullptr) mt::fail(mt::ExitCode::failure, "internal: no reference backend in this build");
      for (const auto& spec : verify_inputs) {
        auto [name, array] = parse_verify_input(spec);
        if (!options.verify_inputs.emplace(name, std::move(array)).second)
          mt::fail(mt::ExitCode::usage, "--verify-input {} is given twice", name);
      }
    }

    mt::Graph graph = tool.load_model(model_path);
    const mt::passes::FuseOutcome outcome = mt::passes::fuse(graph, options);
    if (report->count() > 0) {
      if (report_path.empty()) {
        fmt::print(stderr, "{}", outcome.to_text());
      } else {
        mt::OutputFile file(report_path, false);
        file.write(outcome.to_json().dump(2) + "\n");
        file.commit();
      }
    }
    if (!outcome.ok()) mt::fail(mt::ExitCode::check_failed, "{}", outcome.failure);
    spdlog::info("{} -> {} nodes in {} rounds{}", outcome.nodes_before, outcome.nodes_after, outcome.pipeline.rounds,
                 outcome.verification ? "; " + outcome.verification->message() : std::string());
    tool.save_model(graph, output_path);
    return 0;
  });
}
