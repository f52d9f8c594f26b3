// The C API (include/mt/mt.h) over the library: models read by lib/format, sessions planned
// through the backend registry. Exceptions stop here: every entry point converts them into a
// status and a thread-local message.
#include <mt/mt.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "lib/core/error.h"
#include "lib/format/model_file.h"
#include "lib/ops/valid_rows.h"
#include "lib/runtime/backend_registry.h"
#include "lib/runtime/prepack.h"
#include "lib/runtime/run_once.h"
#include "mt/version.h"

namespace {

thread_local std::string last_error;

// A graph input or output as the C API describes it; strings and shapes owned here.
struct TensorEntry {
  std::string name;
  mt::DType dtype;
  mt::Shape shape;  // what the caller supplies (channels-last inputs as N,H,W,C)
  size_t byte_size;
  std::optional<size_t> count_output;  // an output's valid rows are counted at run time by that output
};

struct ModelData {
  mt::Graph graph;
  std::vector<TensorEntry> inputs, outputs;
};

template <typename... Args>
[[noreturn]] void usage(fmt::format_string<Args...> format, Args&&... args) {
  mt::fail(mt::ExitCode::usage, format, std::forward<Args>(args)...);
}

// Runs `body`, turning any exception into a status and the thread's message.
template <typename Body>
mt_status guarded(Body&& body) {
  try {
    body();
    return MT_OK;
  } catch (const mt::Error& e) {
    last_error = e.what();
    return static_cast<mt_status>(e.code());
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
  } catch (const std::exception& e) {
    last_error = std::string("internal error: ") + e.what();
  } catch (...) {
    last_error = "internal error: unknown exception";
  }
  return MT_ERROR_FAILURE;
}

std::shared_ptr<const ModelData> describe(mt::Graph graph) {
  auto model = std::make_shared<ModelData>();
  model->graph = std::move(graph);
  for (const auto& name : model->graph.inputs) {
    const mt::TensorInfo& info = model->graph.tensor(name);
    const mt::Shape shape = mt::caller_shape(info);
    model->inputs.push_back({name, info.dtype, shape, static_cast<size_t>(mt::numel(shape)) * mt::dtype_size(info.dtype)});
  }
  const auto counts = mt::valid_row_counts(model->graph, mt::ExitCode::invalid_input);
  const auto& outputs = model->graph.outputs;
  for (const auto& name : outputs) {
    const mt::TensorInfo& info = model->graph.tensor(name);
    std::optional<size_t> count_output;
    if (auto it = counts.find(name); it != counts.end())
      count_output = static_cast<size_t>(std::find(outputs.begin(), outputs.end(), it->second) - outputs.begin());
    model->outputs.push_back({name, info.dtype, info.shape, info.byte_size(), count_output});
  }
  return model;
}

size_t find_entry(const std::vector<TensorEntry>& entries, const char* name, const char* kind) {
  if (name == nullptr) usage("{} name is NULL", kind);
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == name) return i;
  std::string names;
  for (const auto& entry : entries) names += (names.empty() ? "" : ", ") + entry.name;
  usage("the model has no {} '{}' (its {}s: {})", kind, name, kind, names);
}

void check_binding(const TensorEntry& entry, const char* kind, mt_dtype dtype, const void* data, size_t size) {
  if (data == nullptr) usage("{} '{}': the buffer is NULL", kind, entry.name);
  if (static_cast<int>(dtype) != static_cast<int>(entry.dtype))
    usage("{} '{}' is {}, the buffer is {}", kind, entry.name, mt::dtype_name(entry.dtype), mt_dtype_name(dtype));
  if (size != entry.byte_size)
    usage("{} '{}' ({} {}) takes {} bytes, the buffer has {}", kind, entry.name, mt::dtype_name(entry.dtype),
          mt::shape_str(entry.shape), entry.byte_size, size);
}

void fill_info(const TensorEntry& entry, mt_tensor_info* info) {
  info->name = entry.name.c_str();
  info->dtype = static_cast<mt_dtype>(entry.dtype);
  info->rank = entry.shape.size();
  info->shape = entry.shape.data();
  info->byte_size = entry.byte_size;
}

}  // namespace

struct mt_model {
  std::shared_ptr<const ModelData> data;
};

struct mt_session {
  std::shared_ptr<const ModelData> model;  // keeps the graph (and the weights it maps) alive
  std::unique_ptr<mt::ExecutionPlan> plan;
  std::vector<bool> input_bound, output_bound;
  bool has_run = false;
};

namespace {

mt_status tensor_info(const mt_model* model, size_t index, mt_tensor_info* info, bool input) {
  return guarded([&] {
    if (model == nullptr || info == nullptr) usage("model or info is NULL");
    const auto& entries = input ? model->data->inputs : model->data->outputs;
    if (index >= entries.size())
      usage("{} index {} is out of range (the model has {})", input ? "input" : "output", index, entries.size());
    fill_info(entries[index], info);
  });
}

mt_status open_model(mt_model** model, const std::function<mt::Graph()>& read) {
  return guarded([&] {
    if (model == nullptr) usage("the model pointer is NULL");
    *model = nullptr;
    auto data = describe(read());
    *model = new mt_model{std::move(data)};
  });
}

}  // namespace

extern "C" {

const char* mt_version(void) { return MT_VERSION_STRING; }

const char* mt_last_error(void) { return last_error.c_str(); }

const char* mt_status_name(mt_status status) {
  switch (status) {
    case MT_OK: return "ok";
    case MT_ERROR_FAILURE: return "failure";
    case MT_ERROR_USAGE: return "usage";
    case MT_ERROR_INVALID_INPUT: return "invalid input";
    case MT_ERROR_UNSUPPORTED: return "unsupported";
    case MT_ERROR_CHECK_FAILED: return "check failed";
    case MT_STATUS_MAX_ENUM: break;
  }
  return "unknown status";
}

const char* mt_dtype_name(mt_dtype dtype) {
  if (dtype < MT_FLOAT32 || dtype > MT_BOOL) return "unknown dtype";
  return mt::dtype_name(static_cast<mt::DType>(dtype)).data();  // names are string literals
}

mt_status mt_model_open(const char* path, mt_model** model) {
  return open_model(model, [&] {
    if (path == nullptr || *path == '\0') usage("the model path is empty");
    return mt::read_model(path);
  });
}

mt_status mt_model_open_memory(const void* data, size_t size, mt_model** model) {
  return open_model(model, [&] {
    if (data == nullptr && size > 0) usage("the model bytes are NULL");
    // A 64-byte aligned copy, as the data section of a memory-mapped file would be.
    auto block = std::make_shared<mt::ConstData>(mt::ConstData::copy_of(data, size));
    const mt::InputBytes input{.owner = block, .data = block->data(), .size = size, .source = "<memory>"};
    return mt::decode_model(input);
  });
}

void mt_model_close(mt_model* model) { delete model; }

size_t mt_model_input_count(const mt_model* model) { return model == nullptr ? 0 : model->data->inputs.size(); }
size_t mt_model_output_count(const mt_model* model) { return model == nullptr ? 0 : model->data->outputs.size(); }

mt_status mt_model_input(const mt_model* model, size_t index, mt_tensor_info* info) {
  return tensor_info(model, index, info, true);
}
mt_status mt_model_output(const mt_model* model, size_t index, mt_tensor_info* info) {
  return tensor_info(model, index, info, false);
}

void mt_options_init(mt_options* options) {
  if (options == nullptr) return;
  options->device = "cpu";
  options->threads = 1;
  options->gpu_index = 0;
  options->precision = nullptr;
}

mt_status mt_session_create(const mt_model* model, const mt_options* options, mt_session** session) {
  return guarded([&] {
    if (model == nullptr || session == nullptr) usage("model or session pointer is NULL");
    *session = nullptr;
    mt_options defaults;
    mt_options_init(&defaults);
    const mt_options& o = options == nullptr ? defaults : *options;
    const std::string device = o.device == nullptr ? "cpu" : o.device;
    if (o.threads < 1 || o.threads > 256) usage("threads {} is out of range (1 to 256)", o.threads);
    if (o.gpu_index < 0) usage("gpu_index {} is negative", o.gpu_index);
    const std::string precision = o.precision == nullptr ? mt::default_precision(model->data->graph) : o.precision;
    if (precision != "fp32" && precision != "fp16") usage("precision '{}' is neither fp32 nor fp16", precision);
    const mt::Backend& backend = mt::require_backend(device);
    mt::require_model_backend(model->data->graph, device, "the model");
    // An absent device is unsupported here, not a usage error as mt-run's --gpu N is.
    backend.describe(o.gpu_index);
    // The kernel paths as mt-run's (MT_CPU_* in the environment, mt(3)).
    mt::PlanOptions plan_options = mt::PlanOptions::from_environment();
    plan_options.threads = o.threads;
    plan_options.gpu_index = o.gpu_index;
    plan_options.precision = precision;
    auto created = std::make_unique<mt_session>();
    created->model = model->data;
    created->plan = backend.plan(model->data->graph, plan_options);
    created->input_bound.assign(model->data->inputs.size(), false);
    created->output_bound.assign(model->data->outputs.size(), false);
    *session = created.release();
  });
}

void mt_session_destroy(mt_session* session) { delete session; }

mt_status mt_session_bind_input(mt_session* session, const char* name, mt_dtype dtype, const void* data, size_t size) {
  return guarded([&] {
    if (session == nullptr) usage("the session is NULL");
    const size_t index = find_entry(session->model->inputs, name, "input");
    check_binding(session->model->inputs[index], "input", dtype, data, size);
    session->plan->bind_input(index, data);
    session->input_bound[index] = true;
  });
}

mt_status mt_session_bind_output(mt_session* session, const char* name, mt_dtype dtype, void* data, size_t size) {
  return guarded([&] {
    if (session == nullptr) usage("the session is NULL");
    const size_t index = find_entry(session->model->outputs, name, "output");
    check_binding(session->model->outputs[index], "output", dtype, data, size);
    session->plan->bind_output(index, data);
    session->output_bound[index] = true;
  });
}

mt_status mt_session_run(mt_session* session) {
  return guarded([&] {
    if (session == nullptr) usage("the session is NULL");
    for (size_t i = 0; i < session->input_bound.size(); ++i)
      if (!session->input_bound[i])
        usage("input '{}' is not bound (mt_session_bind_input)", session->model->inputs[i].name);
    for (size_t i = 0; i < session->output_bound.size(); ++i)
      if (!session->output_bound[i])
        usage("output '{}' is not bound (mt_session_bind_output)", session->model->outputs[i].name);
    session->plan->run();
    session->has_run = true;
  });
}

mt_status mt_session_output_rows(const mt_session* session, const char* name, int64_t* rows) {
  return guarded([&] {
    if (session == nullptr || rows == nullptr) usage("session or rows is NULL");
    const size_t index = find_entry(session->model->outputs, name, "output");
    const TensorEntry& entry = session->model->outputs[index];
    if (entry.shape.empty()) usage("output '{}' is a scalar: it has no rows", entry.name);
    if (!entry.count_output) {
      *rows = entry.shape[0];
      return;
    }
    if (!session->has_run) usage("output '{}' has its valid rows counted by a run: run the session first", entry.name);
    const auto* count = static_cast<const int64_t*>(session->plan->output_data(*entry.count_output));
    *rows = std::clamp<int64_t>(*count, 0, entry.shape[0]);
  });
}

}  // extern "C"
