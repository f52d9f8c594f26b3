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
  std::vector<std::string> input_shapes;
  bool list_ops = false;
  auto& app = tool.app();
  app.add_option("MODEL", input, "ONNX model file (- or none: standard input); external data is read beside it")
      ->option_text("MODEL.onnx");
  tool.add_output_option(output);
  app.add_option("--input-shape", input_shapes,
                 "Fix the shape of a model input with dynamic dimensions (repeat for several inputs)")
      ->option_text("NAME:D0,D1,...")
      ->allow_extra_args(false);
  app.add_flag("--list-ops", list_ops, "List the ONNX op types mt imports and exit");

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
    // Refuse a terminal before the (possibly long) import rather than after it.
    if ((output.empty() || output == "-") && mt::stdout_is_terminal())
      mt::fail(mt::ExitCode::usage, "refusing to write a binary model to a terminal: use -o FILE or redirect stdout");
    mt::Graph graph = mt::import_onnx(input, options);
    tool.save_model(graph, output);
    return 0;
  });
}
