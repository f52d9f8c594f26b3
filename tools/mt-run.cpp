// mt-run: one inference of a model on a backend, from .npy files, images or random inputs;
// prints a summary (or JSON), writes outputs, and checks them against references.
#include <filesystem>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "lib/cli/image_flags.h"
#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/runtime/backend_registry.h"
#include "lib/runtime/inputs.h"
#include "lib/runtime/report.h"
#include "lib/runtime/run_once.h"

namespace {

using nlohmann::json;

struct Options {
  std::string device = "cpu";
  std::string model;
  int threads = 1;
  int gpu = 0;                    // vulkan
  std::string precision;  // vulkan; empty: mt::default_precision(model)
  bool gpu_given = false, precision_given = false;
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

json summary_json(const std::string& name, const mt::HostArray& array) {
  const auto s = mt::summarize(mt::to_doubles(array.dtype, array.data.data(), static_cast<size_t>(array.numel())));
  return {{"name", name}, {"dtype", mt::dtype_name(array.dtype)}, {"shape", array.shape}, {"min", s.min},
          {"max", s.max}, {"mean", s.mean}, {"nan_count", s.nan_count}};
}

int run(const mt::cli::Tool& tool, const Options& o) {
  if (o.list_devices) {
    for (const auto& name : mt::backend_names()) {
      // The backend, then its devices (vulkan's GPUs) indented: what --gpu N picks.
      fmt::print("{}\n{}", name, mt::find_backend(name)->devices("  "));
    }
    return 0;
  }
  const mt::Backend* backend = mt::find_backend(o.device);
  if (backend == nullptr)
    mt::unsupported("device '{}' is not built into this mt (built: {})", o.device, fmt::join(mt::backend_names(), ", "));
  if (o.threads != 1 && o.device == "reference") spdlog::warn("--threads {}: the reference backend runs on one thread", o.threads);
  if ((o.gpu_given || o.precision_given) && o.device != "vulkan")
    mt::fail(mt::ExitCode::usage, "{} applies to --device vulkan only", o.gpu_given ? "--gpu" : "--precision");
  if (!o.labels.empty() && o.topk == 0) mt::fail(mt::ExitCode::usage, "--labels needs --topk K");
  const mt::InputOptions in = input_options(o);  // flag errors before the (possibly slow) model read

  const mt::Graph graph = tool.load_model(o.model);
  const std::string model_name = o.model.empty() || o.model == "-" ? "<stdin>" : o.model;
  mt::require_model_backend(graph, o.device, model_name);
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
  mt::PlanOptions plan_options;
  plan_options.threads = o.threads;
  plan_options.gpu_index = o.gpu;
  plan_options.precision = o.precision.empty() ? mt::default_precision(graph) : o.precision;
  const mt::RunResult result = mt::run_once(*backend, graph, plan_options, inputs);
  spdlog::info("{}: planned in {:.2f} ms, ran in {:.2f} ms; arena {} bytes (unshared {}), weights {} bytes, packed {}",
               o.device, result.plan_seconds * 1e3, result.run_seconds * 1e3, result.memory.arena_bytes,
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
  json report = {{"model", model_name}, {"device", o.device}, {"threads", o.threads},
                 {"plan_ms", result.plan_seconds * 1e3}, {"run_ms", result.run_seconds * 1e3},
                 {"memory", {{"arena_bytes", result.memory.arena_bytes},
                             {"intermediate_bytes", result.memory.intermediate_bytes},
                             {"weight_bytes", result.memory.weight_bytes},
                             {"packed_weight_bytes", result.memory.packed_weight_bytes}}},
                 {"outputs", json::array()}};
  if (labels.size() > 0)
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const auto& shape = result.outputs[i].shape;
      if (!shape.empty() && static_cast<size_t>(shape.back()) != labels.size())
        spdlog::warn("{} has {} labels but output '{}' has {} classes", o.labels, labels.size(), graph.outputs[i], shape.back());
    }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const mt::HostArray& out = result.outputs[i];
    json entry = summary_json(graph.outputs[i], out);
    if (!written[i].empty()) entry["file"] = written[i];
    if (!o.json)
      fmt::print("{} {} {}: {}\n", graph.outputs[i], mt::dtype_name(out.dtype), mt::shape_str(out.shape),
                 mt::summary_str(mt::summarize(mt::to_doubles(out.dtype, out.data.data(), static_cast<size_t>(out.numel())))));
    if (o.topk > 0) {
      entry["topk"] = json::array();
      const auto rows = mt::top_k(out, o.topk);
      for (size_t row = 0; row < rows.size(); ++row) {
        json row_json = json::array();
        if (!o.json) fmt::print("  top {}{}:\n", rows[row].size(), rows.size() > 1 ? fmt::format(" of row {}", row) : "");
        for (size_t rank = 0; rank < rows[row].size(); ++rank) {
          const auto& e = rows[row][rank];
          const std::string label = e.index < labels.size() ? labels[e.index] : "";
          row_json.push_back({{"index", e.index}, {"value", e.value}, {"label", label}});
          if (!o.json) fmt::print("  {:>3}. {:>6} {:>12.6g}  {}\n", rank + 1, e.index, e.value, label);
        }
        entry["topk"].push_back(std::move(row_json));
      }
    }
    report["outputs"].push_back(std::move(entry));
  }

  bool passed = true;
  if (!compare_specs.empty()) {
    mt::CheckOptions check{.atol = o.atol, .rtol = o.rtol, .atol_range = o.atol_range, .min_cosine = o.min_cosine};
    report["compare"] = json::array();
    for (size_t c = 0; c < compare_specs.size(); ++c) {
      const auto& spec = compare_specs[c];
      const std::string& name = graph.outputs[spec.index];
      const mt::CheckResult r = mt::check_output(name, result.outputs[spec.index], references[c], spec.path, check);
      passed = passed && r.passed;
      const auto& cmp = r.comparison;
      report["compare"].push_back({{"output", name}, {"reference", spec.path}, {"max_abs_error", cmp.max_abs_error},
                                   {"max_rel_error", cmp.max_rel_error}, {"cosine", cmp.cosine},
                                   {"reference_range", cmp.expected_range()}, {"atol", r.atol}, {"rtol", o.rtol},
                                   {"mismatches", cmp.mismatches}, {"passed", r.passed}, {"failure", r.failure}});
      if (!o.json)
        fmt::print("compare {} with {}: max abs error {:.3g}, max rel error {:.3g}, cosine {:.8f} (range {:.4g}, atol {:.3g}, rtol {:.3g}): {}\n",
                   name, spec.path, cmp.max_abs_error, cmp.max_rel_error, cmp.cosine, cmp.expected_range(), r.atol,
                   o.rtol, r.passed ? "ok" : "FAILED: " + r.failure);
    }
    report["passed"] = passed;
  }
  if (o.json) fmt::print("{}\n", report.dump(2));
  if (!passed) {
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
  app.add_option("-d,--device", o.device, "Backend to run on")
      ->check(CLI::IsMember({"reference", "cpu", "vulkan"}))
      ->capture_default_str();
  app.add_option("-t,--threads", o.threads, "Threads of the cpu backend")->check(CLI::Range(1, 256))->capture_default_str();
  app.add_option("--gpu", o.gpu, "Vulkan device to run on (see --list-devices)")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber)
      ->each([&](const std::string&) { o.gpu_given = true; })
      ->capture_default_str();
  app.add_option("--precision", o.precision,
                 "Storage and arithmetic of the vulkan backend (fp16: accumulations stay fp32); default: the "
                 "precision a vulkan-prepacked model was packed in, else fp32")
      ->check(CLI::IsMember({"fp32", "fp16"}))
      ->each([&](const std::string&) { o.precision_given = true; });
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
