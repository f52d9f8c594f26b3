// mt-convert: ONNX model in, mt model out. Parses flags and calls the importer (lib/import).
#include <cstdio>
#include <string>
#include <vector>

#include "lib/cli/tool.h"
#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/import/onnx_importer.h"

int main(int argc, char** argv) {
  mt::cli::Tool tool("mt-convert", "Convert an ONNX model to an mt model (written to -o FILE or standard output).");
  std::string input = "-";
  std::string output;
  std::vector<std::string> input_shapes, input_values;
  bool list_ops = false, list_value_inputs = false;
  auto& app = tool.app();
  app.add_option("MODEL", input, "ONNX model file (- or none: standard input); external data is read beside it")
      ->option_text("MODEL.onnx");
  tool.add_output_option(output);
  app.add_option("--input-shape", input_shapes,
                 "Fix the shape of a model input with dynamic dimensions (repeat for several inputs)")
      ->option_text("NAME:D0,D1,...")
      ->allow_extra_args(false);
  app.add_option("--input-value", input_values,
                 "Pin a model input to the value in a .npy file: it becomes a constant, so that the shapes, axes or "
                 "sizes computed from it are known at conversion (repeat for several inputs)")
      ->option_text("NAME=FILE.npy")
      ->allow_extra_args(false);
  app.add_flag("--list-ops", list_ops, "List the ONNX op types mt imports and exit");
  app.add_flag("--list-value-inputs", list_value_inputs,
               "List the model inputs whose values the conversion needs (--input-value), one per line, and exit");

  return tool.run(argc, argv, [&] {
    if (list_ops) {
      for (const auto& op : mt::importable_onnx_ops()) std::printf("%s\n", op.c_str());
      return 0;
    }
    mt::ImportOptions options;
    for (const auto& spec : input_shapes) {
      auto [name, shape] = mt::parse_input_shape(spec);
      if (!options.input_shapes.emplace(name, shape).second)
        mt::fail(mt::ExitCode::usage, "--input-shape is given twice for input '{}'", name);
    }
    for (const auto& spec : input_values) {
      auto [name, path] = mt::parse_input_value(spec);
      if (options.input_values.count(name))
        mt::fail(mt::ExitCode::usage, "--input-value is given twice for input '{}'", name);
      options.input_values.emplace(name, mt::ImportOptions::InputValue{path, mt::read_npy(path)});
    }
    if (list_value_inputs) {
      if (!output.empty()) mt::fail(mt::ExitCode::usage, "--list-value-inputs writes no model: drop -o");
      for (const auto& name : mt::value_inputs_needed(input, options)) std::printf("%s\n", name.c_str());
      return 0;
    }
    // Refuse a terminal before the (possibly long) import rather than after it.
    if ((output.empty() || output == "-") && mt::stdout_is_terminal())
      mt::fail(mt::ExitCode::usage, "refusing to write a binary model to a terminal: use -o FILE or redirect stdout");
    mt::Graph graph = mt::import_onnx(input, options);
    tool.save_model(graph, output);
    return 0;
  });
}
