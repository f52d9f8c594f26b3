#include "lib/cli/tool.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <new>

#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/core/version.h"
#include "lib/format/model_file.h"

namespace mt::cli {

Tool::Tool(std::string name, std::string description) : name_(std::move(name)), app_(std::move(description), name_) {
  app_.set_version_flag("--version", [] { return version_details() + fmt::format(", model format {}", kFormatVersion); },
                        "Print the version and exit");
  app_.add_flag("-v,--verbose", verbosity_, "More log output on stderr (repeat for more)");
  app_.add_flag("-q,--quiet", quiet_, "Only errors on stderr");
  app_.get_formatter()->column_width(34);
}

int Tool::run(int argc, char** argv, const std::function<int()>& body) {
  reserve_standard_streams();
  install_output_signal_handlers();
  args_.assign(argv + 1, argv + argc);
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>(stderr_is_terminal() ? spdlog::color_mode::automatic
                                                                                        : spdlog::color_mode::never);
  auto logger = std::make_shared<spdlog::logger>(name_, sink);
  logger->set_pattern("%n: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for usage.\n", name_.c_str(), e.what(), name_.c_str());
    return static_cast<int>(ExitCode::usage);
  }
  spdlog::level::level_enum level = spdlog::level::warn;
  if (quiet_) level = spdlog::level::err;
  else if (verbosity_ == 1) level = spdlog::level::info;
  else if (verbosity_ == 2) level = spdlog::level::debug;
  else if (verbosity_ >= 3) level = spdlog::level::trace;
  spdlog::set_level(level);

  try {
    return body();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", name_.c_str(), e.what());
    return static_cast<int>(e.code());
  } catch (const BrokenPipe&) {
    return static_cast<int>(ExitCode::ok);  // the reader went away (e.g. `| head`): not an error
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", name_.c_str());
    return static_cast<int>(ExitCode::failure);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: internal error: %s\n", name_.c_str(), e.what());
    return static_cast<int>(ExitCode::failure);
  }
}

Graph Tool::load_model(const std::string& path) const {
  DataCheck data_check;
  Graph graph = load_model(path, data_check);
  data_check.wait();
  return graph;
}

Graph Tool::load_model(const std::string& path, DataCheck& data_check) const {
  Graph graph = read_model(path, data_check);
  spdlog::info("read {}: {} nodes, {} tensors", path.empty() || path == "-" ? "<stdin>" : path, graph.nodes.size(),
               graph.tensors.size());
  return graph;
}

void Tool::save_model(Graph& graph, const std::string& path) const {
  graph.add_provenance(name_, args_);
  mt::save_model(graph, path);
  spdlog::info("wrote {}", path.empty() || path == "-" ? "<stdout>" : path);
}

void Tool::add_output_option(std::string& path, const std::string& what) {
  app_.add_option("-o,--output", path, "Write the " + what + " to this file (atomically); default: stdout")
      ->option_text("FILE");
}

}  // namespace mt::cli
