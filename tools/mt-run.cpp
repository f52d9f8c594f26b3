// mt-run: one inference of a model on a backend, from .npy files, images or random inputs;
// prints a summary (or JSON), writes outputs, and checks them against references.
#include <filesystem>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "lib/cli/device_flags.h"
#include "lib/cli/image_flags.h"
#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/runtime/backend_registry.h"
#include "lib/runtime/inputs.h"
#include "lib/runtime/report.h"
#include "lib/runtime/run_once.h"
#include "lib/runtime/run_report.h"

namespace {

struct Options {
  mt::cli::DeviceFlags run_on;
  std::string model;
  std::vector<std::string> inputs, outputs, compares;
  mt::cli::ImageFlags image;
  std::string output_dir, labels;
  bool random = false, json = false, list_devices = false;
  uint64_t seed = 0;
  size_t topk = 0;
  double atol = 1e-4, rtol = 1e-4;
  std::optional<double> atol_range, min_cosine;
};

mt::InputOptions input_options(const Options& o) {
  mt::InputOptions in;
  in.specs = o.inputs;
  in.image = o.image.parse();
  in.random = o.random;
  in.seed = o.seed;
  return in;
}

int run(const mt::cli::Tool& tool, const Options& o) {
  if (o.list_devices) {
    for (const auto& name : mt::backend_names()) {
      // The backend, then its devices (vulkan's GPUs) indented: what --gpu N picks.
      fmt::print("{}\n{}", name, mt::find_backend(name)->devices("  "));
    }
    return 0;
  }
  const mt::Backend& backend = mt::require_backend(o.run_on.device);
  o.run_on.check();
  // Before the model is read, so that a bad MT_CPU_* value costs no (possibly slow) read either.
  mt::PlanOptions plan_options = o.run_on.plan_options(mt::PlanOptions::from_environment());
  if (!o.labels.empty() && o.topk == 0) mt::fail(mt::ExitCode::usage, "--labels needs --topk K");
  const mt::InputOptions in = input_options(o);  // flag errors before the (possibly slow) model read

  // The data section's checksum runs on a thread of its own until run_once has planned the model.
  mt::DataCheck data_check;
  const mt::Graph graph = tool.load_model(o.model, data_check);
  const std::string model_name = o.model.empty() || o.model == "-" ? "<stdin>" : o.model;
  mt::require_model_backend(graph, o.run_on.device, model_name);
  std::vector<mt::OutputSpec> output_specs, compare_specs;
  for (const auto& spec : o.outputs) {
    output_specs.push_back(mt::parse_output_spec(graph, spec, "--output"));
    if (output_specs.back().path == "-")
      mt::fail(mt::ExitCode::usage, "--output {}: name a file (standard output carries the summary)", spec);
  }
  for (const auto& spec : o.compares) compare_specs.push_back(mt::parse_output_spec(graph, spec, "--compare"));
  std::vector<mt::HostArray> references;
  for (const auto& spec : compare_specs) references.push_back(mt::read_npy(spec.path));
  const std::vector<std::string> labels = o.labels.empty() ? std::vector<std::string>{} : mt::read_labels(o.labels);

  const std::vector<mt::HostArray> inputs = mt::load_inputs(graph, in);
  if (plan_options.precision.empty()) plan_options.precision = mt::default_precision(graph);
  const mt::RunResult result =
      data_check.guard([&] { return mt::run_once(backend, graph, plan_options, inputs, &data_check); });
  spdlog::info("{}: planned in {:.2f} ms, ran in {:.2f} ms; arena {} bytes (unshared {}), weights {} bytes, packed {}",
               o.run_on.device, result.plan_seconds * 1e3, result.run_seconds * 1e3, result.memory.arena_bytes,
               result.memory.intermediate_bytes, result.memory.weight_bytes, result.memory.packed_weight_bytes);

  // Files.
  std::vector<std::string> written(graph.outputs.size());
  for (const auto& spec : output_specs) {
    const auto& out = result.outputs[spec.index];
    mt::write_npy(spec.path, out.dtype, out.shape, out.data.data());
    written[spec.index] = spec.path;
  }
  if (!o.output_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(o.output_dir, error);
    if (error) mt::fail(mt::ExitCode::failure, "--output-dir {}: cannot create: {}", o.output_dir, error.message());
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const std::string path = (std::filesystem::path(o.output_dir) / mt::output_file_name(graph.outputs[i])).string();
      mt::write_npy(path, result.outputs[i].dtype, result.outputs[i].shape, result.outputs[i].data.data());
      written[i] = path;
    }
  }

  // Report.
  const mt::RunReport report = mt::run_report(
      graph, result,
      {.model_name = model_name, .device = o.run_on.device, .threads = o.run_on.threads, .written = std::move(written),
       .topk = o.topk, .labels = labels, .labels_path = o.labels, .compares = std::move(compare_specs),
       .references = std::move(references),
       .check = {.atol = o.atol, .rtol = o.rtol, .atol_range = o.atol_range, .min_cosine = o.min_cosine}});
  fmt::print("{}", o.json ? report.json.dump(2) + "\n" : report.text);
  if (!report.passed) {
    spdlog::error("outputs differ from the reference beyond the tolerances");
    return static_cast<int>(mt::ExitCode::check_failed);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  mt::cli::Tool tool("mt-run", "Run one inference of a model and summarise, save or check its outputs.");
  Options o;
  auto& app = tool.app();
  app.add_option("model", o.model, "Model file (.mt); default or '-': stdin")->option_text("MODEL");
  o.run_on.add_to(app, "--list-devices");
  app.add_option("-i,--input", o.inputs, "Input from a .npy file or an image (repeat per input; FILE alone for a single-input model)")
      ->option_text("NAME=FILE")
      ->allow_extra_args(false);
  o.image.add_to(app);
  auto* random = app.add_flag("--random-input", o.random, "Fill inputs not given by --input with seeded random values");
  app.add_option("--seed", o.seed, "Seed of --random-input")->needs(random)->capture_default_str();
  app.add_option("-o,--output", o.outputs, "Write an output to a .npy file (repeatable; FILE alone for a single-output model)")
      ->option_text("NAME=FILE")
      ->allow_extra_args(false);
  app.add_option("--output-dir", o.output_dir, "Write every output to DIR/NAME.npy")->option_text("DIR");
  auto* topk = app.add_option("--topk", o.topk, "Show the K largest values of each output (classifier scores)")
                   ->option_text("K")
                   ->check(CLI::Range(1, 1000000));
  app.add_option("--labels", o.labels, "Class names for --topk, one per line")->option_text("FILE")->needs(topk);
  app.add_flag("--list-devices", o.list_devices, "List the devices (backends, and the GPUs of vulkan) and exit");
  app.add_flag("--json", o.json, "Print one JSON object instead of the text summary");
  auto* compare = app.add_option("--compare", o.compares, "Check an output against a reference .npy (repeatable)")
                      ->option_text("[NAME=]REF.npy")
                      ->allow_extra_args(false);
  app.add_option("--atol", o.atol, "Absolute tolerance of --compare")->needs(compare)->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--rtol", o.rtol, "Relative tolerance of --compare")->needs(compare)->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--atol-range", o.atol_range,
                 "Absolute tolerance as a fraction of the reference's range (max - min); replaces --atol")
      ->option_text("F")
      ->needs(compare)
      ->check(CLI::NonNegativeNumber);
  app.add_option("--min-cosine", o.min_cosine, "Also require this cosine similarity with the reference")
      ->option_text("C")
      ->needs(compare)
      ->check(CLI::Range(-1.0, 1.0));
  return tool.run(argc, argv, [&] { return run(tool, o); });
}
