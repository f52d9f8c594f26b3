#include "lib/import/onnx_loader.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <spdlog/spdlog.h>

#include <climits>
#include <filesystem>

#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/format/model_file.h"
#include "lib/import/opset_upgrade.h"

namespace mt::onnx_import {
namespace {

// The checker's messages span lines; mt errors are one line.
std::string one_line(const std::string& text) {
  std::string result;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !result.empty();
      continue;
    }
    if (space) result += ' ';
    space = false;
    result += c;
  }
  return result;
}

int default_domain_opset(const onnx::ModelProto& model, const std::string& source) {
  int opset = 0;
  std::string others;
  for (const auto& entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx") opset = static_cast<int>(entry.version());
    else others += (others.empty() ? "" : ", ") + entry.domain();
  }
  // A valid model may use only other domains (ai.onnx.preview.training, say): none of mt's ops.
  if (opset <= 0 && !others.empty())
    unsupported("{}: the model imports only the domains {}, and mt imports ops of the default ONNX domain", source,
                others);
  if (opset <= 0) invalid_input("{}: the model imports no opset of the default ONNX domain", source);
  return opset;
}

// A model read from standard input has no directory to find external data in.
void refuse_external_data(const onnx::GraphProto& graph, const std::string& source) {
  for (const auto& init : graph.initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string location;
    for (const auto& entry : init.external_data())
      if (entry.key() == "location") location = entry.value();
    unsupported("{}: tensor '{}': external data ('{}') needs the model as a file path, not standard input", source,
                init.name(), location);
  }
}

}  // namespace

LoadedOnnx load_onnx(const std::string& path) {
  const InputBytes bytes = read_input(path);
  std::string directory;
  if (!path.empty() && path != "-") {
    const auto parent = std::filesystem::path(path).parent_path();
    directory = parent.empty() ? "." : parent.string();
  }
  return load_onnx_bytes(bytes, directory);
}

LoadedOnnx load_onnx_bytes(const InputBytes& bytes, const std::string& directory) {
  LoadedOnnx loaded;
  loaded.source = bytes.source;
  loaded.directory = directory;
  if (bytes.size == 0) invalid_input("{}: empty file, expected an ONNX model", loaded.source);
  if (bytes.size > static_cast<size_t>(INT_MAX))
    invalid_input("{}: {} bytes is beyond protobuf's 2 GiB limit (large ONNX models keep weights as external data)",
                  loaded.source, bytes.size);
  loaded.model = std::make_unique<onnx::ModelProto>();
  if (!loaded.model->ParseFromArray(bytes.data, static_cast<int>(bytes.size)))
    invalid_input("{}: not an ONNX model, or truncated (protobuf parsing failed)", loaded.source);
  if (loaded.model->ir_version() <= 0 || !loaded.model->has_graph())
    invalid_input("{}: not an ONNX model (no IR version or no graph)", loaded.source);
  if (static_cast<size_t>(loaded.model->graph().node_size()) > kMaxNodes)
    unsupported("{}: {} nodes, more than the {} mt imports", loaded.source, loaded.model->graph().node_size(), kMaxNodes);
  loaded.opset = loaded.original_opset = default_domain_opset(*loaded.model, loaded.source);
  if (loaded.directory.empty()) refuse_external_data(loaded.model->graph(), loaded.source);
  check_onnx(*loaded.model, loaded.source, loaded.directory, loaded.opset);
  if (loaded.opset < kMinOpset) {
    // The checked original goes through ONNX's converter; what it returns is checked again, so that
    // a bad upgrade is refused here rather than mistranslated.
    *loaded.model = upgrade_opset(*loaded.model, loaded.opset, kMinOpset, loaded.source);
    loaded.opset = default_domain_opset(*loaded.model, loaded.source);
    try {
      check_onnx(*loaded.model, loaded.source, loaded.directory, loaded.opset);
    } catch (const Error& e) {
      unsupported("{} (after ONNX's version converter upgraded it from opset {} to {})", e.what(),
                  loaded.original_opset, loaded.opset);
    }
    spdlog::info("{}: upgraded from opset {} to opset {} with ONNX's version converter", loaded.source,
                 loaded.original_opset, loaded.opset);
  }
  return loaded;
}

void check_onnx(const onnx::ModelProto& model, const std::string& source, const std::string& directory, int opset) {
  const int known_opset = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at(onnx::ONNX_DOMAIN).second;
  if (opset > known_opset || model.ir_version() > onnx::IR_VERSION) {
    spdlog::warn("{}: opset {} / IR version {} is newer than the installed ONNX checker knows ({} / {}); skipping it",
                 source, opset, model.ir_version(), known_opset, static_cast<int>(onnx::IR_VERSION));
    return;
  }
  // What onnx::checker::check_model(ModelProto) does, but with the model's directory set so
  // that external data is found beside the model rather than in the working directory.
  try {
    onnx::checker::CheckerContext context;
    context.set_ir_version(static_cast<int>(model.ir_version()));
    std::unordered_map<std::string, int> opsets;
    for (const auto& entry : model.opset_import()) opsets[entry.domain()] = static_cast<int>(entry.version());
    context.set_opset_imports(opsets);
    context.set_model_dir(directory.empty() ? "." : directory);
    onnx::checker::LexicalScopeContext scope;
    onnx::checker::check_graph(model.graph(), context, scope);
    if (model.ir_version() >= 8) onnx::checker::check_model_local_functions(model, context, scope);
  } catch (const onnx::checker::ValidationError& e) {
    invalid_input("{}: fails the ONNX checker: {}", source, one_line(e.what()));
  } catch (const std::exception& e) {
    invalid_input("{}: fails the ONNX checker: {}", source, one_line(e.what()));
  }
}

}  // namespace mt::onnx_import
