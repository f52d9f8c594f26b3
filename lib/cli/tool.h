// The conventions every mt tool shares, implemented once: --help, --version, -v/-q, logging
// to stderr, exceptions turned into one-line errors and documented exit codes, and models
// read from a path or stdin and written to -o or stdout.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "lib/format/model_file.h"
#include "lib/ir/graph.h"

namespace mt::cli {

class Tool {
 public:
  Tool(std::string name, std::string description);

  CLI::App& app() { return app_; }
  const std::string& name() const { return name_; }

  // Parses the command line, sets up logging and signal handling, runs `body` and returns the
  // exit code: body's result, 2 for a usage error, or the code of an mt::Error it threw.
  int run(int argc, char** argv, const std::function<int()>& body);

  // Reads the model argument (a path, "-" or "" for stdin).
  Graph load_model(const std::string& path) const;
  // The same, the data section's checksum left running in `data_check` (model_file.h).
  Graph load_model(const std::string& path, DataCheck& data_check) const;
  // Appends this invocation to the model's provenance and writes it (to -o PATH or stdout).
  void save_model(Graph& graph, const std::string& path) const;

  // Adds the standard "-o,--output" option to the app.
  void add_output_option(std::string& path, const std::string& what = "output model");

 private:
  std::string name_;
  CLI::App app_;
  std::vector<std::string> args_;
  int verbosity_ = 0;
  bool quiet_ = false;
};

}  // namespace mt::cli
