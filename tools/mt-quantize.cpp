// mt-quantize: int8 post-training quantization of a float32 model, calibrated on sample inputs,
// with a per-layer report of what it cost against fp32.
#include <spdlog/spdlog.h>

#include <fmt/ranges.h>

#include <cmath>

#include "lib/cli/image_flags.h"
#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/quant/quantize_model.h"
#include "lib/runtime/backend_registry.h"

namespace {

// A progress line on stderr, only when stderr is a terminal.
void show_progress(size_t done, size_t total) {
  constexpr size_t kWidth = 30;
  const size_t filled = total == 0 ? kWidth : done * kWidth / total;
  fmt::print(stderr, "\rcalibrating [{}{}] {}/{}", std::string(filled, '#'), std::string(kWidth - filled, ' '), done, total);
  if (done == total) fmt::print(stderr, "\n");
}

// --sensitivity: the ranking on stdout (text or JSON) and the layers below `threshold_db` as a
// ready --keep-fp32 option.
void print_sensitivity(const std::vector<mt::quant::LayerSensitivity>& layers, double threshold_db, bool json) {
  std::vector<std::string> keep;
  for (const auto& layer : layers)
    if (layer.sqnr_db < threshold_db) keep.push_back(layer.node);
  if (json) {
    nlohmann::json out = {{"threshold_db", threshold_db}, {"keep_fp32", keep}, {"layers", nlohmann::json::array()}};
    for (const auto& layer : layers)
      out["layers"].push_back({{"node", layer.node},
                               {"op", layer.op},
                               {"output_sqnr_db", std::isfinite(layer.sqnr_db) ? nlohmann::json(layer.sqnr_db) : nullptr},
                               {"output_cosine", layer.cosine}});
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("# each layer quantized alone, most sensitive first\n# node\top\toutput_sqnr_db\toutput_cosine\n");
  for (const auto& layer : layers) fmt::print("{}\t{}\t{:.2f}\t{:.6f}\n", layer.node, layer.op, layer.sqnr_db, layer.cosine);
  if (keep.empty())
    fmt::print("# no layer alone brings an output below {} dB\n", threshold_db);
  else
    fmt::print("--keep-fp32 {}\n", fmt::join(keep, ","));
}

}  // namespace

int main(int argc, char** argv) {
  mt::cli::Tool tool("mt-quantize", "Quantize a float32 model to int8 (per-channel weights, per-tensor activations), "
                                    "calibrated on sample inputs, and report the error each layer adds.");
  std::string model_path, output_path, calibration, method = "minmax", report_path;
  mt::cli::ImageFlags image_flags;
  std::vector<std::string> keep_fp32;
  size_t max_samples = 0;
  double percentile = 99.99;
  std::optional<double> auto_fallback, sensitivity;
  bool quantize_io = false, bias_correction = false, json = false;
  auto& app = tool.app();
  app.add_option("model", model_path, "Model file (.mt); default or '-': stdin")->option_text("MODEL");
  tool.add_output_option(output_path, "quantized model");
  app.add_option("--calibration", calibration, "Calibration inputs: a .npy file (one sample or a batch), a directory "
                                               "of .npy files / images, or a list file of paths")
      ->required()
      ->option_text("DIR|LIST|FILE.npy");
  app.add_option("--max-samples", max_samples, "Use at most N calibration samples (default: all)")
      ->check(CLI::PositiveNumber)
      ->option_text("N");
  image_flags.add_to(app);
  app.add_option("--method", method, "Range calibration: minmax, percentile or entropy (KL divergence)")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}));
  auto* percentile_option = app.add_option("--percentile", percentile, "Percentile method: keep this central percentage")
                                ->check(CLI::Range(50.0, 100.0))
                                ->option_text("P");
  app.add_flag("--bias-correction", bias_correction,
               "Correct each int8 conv/linear channel's mean output shift on the calibration samples");
  app.add_option("--keep-fp32", keep_fp32, "Leave these nodes, and every node of op:TYPE, in float32 (comma-separated)")
      ->delimiter(',')
      ->option_text("NODE|op:TYPE,...");
  app.add_option("--auto-fallback", auto_fallback, "Keep in float32, one at a time, layers whose SQNR is below DB")
      ->option_text("DB");
  auto* report = app.add_option("--report", report_path,
                                "Per-layer error against fp32 on the calibration set: text on stderr, or JSON to FILE.json")
                     ->expected(0, 1)
                     ->option_text("[FILE.json]");
  app.add_flag("--quantize-io", quantize_io, "Make the model's inputs and outputs int8 too (default: float32)");
  auto* sensitivity_option =
      app.add_option("--sensitivity", sensitivity,
                     "Write no model: rank layers by the output SQNR each one costs quantized alone, and print the "
                     "--keep-fp32 list of those below DB, on stdout")
          ->option_text("DB");
  auto* json_option = app.add_flag("--json", json, "--sensitivity: print the ranking as JSON");

  return tool.run(argc, argv, [&] {
    if (!report_path.empty() && !report_path.ends_with(".json"))
      mt::fail(mt::ExitCode::usage,
               "--report FILE must name a .json file, got '{}' (for a text report put --report after the model)",
               report_path);
    if (percentile_option->count() > 0 && method != "percentile")
      mt::fail(mt::ExitCode::usage, "--percentile applies to --method percentile only");
    if (json_option->count() > 0 && !sensitivity)
      mt::fail(mt::ExitCode::usage, "--json applies to --sensitivity only");
    if (sensitivity && (!output_path.empty() || report->count() > 0 || auto_fallback || bias_correction))
      mt::fail(mt::ExitCode::usage,
               "--sensitivity writes no model: it takes no -o, --report, --auto-fallback or --bias-correction");
    mt::InputOptions images;
    images.image = image_flags.parse();
    mt::quant::ModelOptions options;
    options.calibration.method = method == "minmax"       ? mt::quant::Method::minmax
                                 : method == "percentile" ? mt::quant::Method::percentile
                                                          : mt::quant::Method::entropy;
    options.calibration.percentile = percentile;
    if (mt::stderr_is_terminal()) options.calibration.progress = show_progress;
    options.quantize.keep_fp32.insert(keep_fp32.begin(), keep_fp32.end());
    options.quantize.quantize_io = quantize_io;
    options.bias_correction = bias_correction;
    options.auto_fallback_db = auto_fallback;
    options.report = report->count() > 0;
    // Never write a model the cpu backend refuses (mt-quantize(1), BACKENDS).
    options.target = mt::find_backend("cpu");
    options.target_options = mt::PlanOptions::from_environment();

    mt::Graph graph = tool.load_model(model_path);
    const auto samples = mt::quant::load_samples(graph, calibration, images, max_samples);
    spdlog::info("calibrating on {} samples ({})", samples.size(), method);
    if (sensitivity_option->count() > 0) {
      print_sensitivity(mt::quant::layer_sensitivity(graph, samples, options), *sensitivity, json);
      return 0;
    }
    mt::quant::ModelResult result = mt::quant::quantize_model(graph, samples, options);
    if (result.report && report->count() > 0) {
      if (report_path.empty()) {
        fmt::print(stderr, "{}", mt::quant::report_text(*result.report));
      } else {
        auto report_data = mt::quant::report_json(*result.report);
        report_data["auto_fallback"] = result.fallback_nodes;
        for (const auto& refused : result.refused_nodes)
          report_data["cpu_refused"].push_back({{"node", refused.node}, {"reason", refused.reason}});
        mt::OutputFile file(report_path, false);
        file.write(report_data.dump(2) + "\n");
        file.commit();
      }
    }
    spdlog::info("{} float32 nodes kept, {} quantize and {} dequantize nodes inserted",
                 result.quantized.float_nodes.size(), result.quantized.quantize_nodes,
                 result.quantized.dequantize_nodes);
    tool.save_model(result.quantized.graph, output_path);
    return 0;
  });
}
