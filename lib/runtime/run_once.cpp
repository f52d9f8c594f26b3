#include "lib/runtime/run_once.h"

#include <algorithm>
#include <chrono>

#include "lib/core/error.h"
#include "lib/ops/valid_rows.h"

namespace mt {

void require_model_backend(const Graph& graph, std::string_view backend, std::string_view model_name) {
  std::optional<std::string> name;
  try {
    name = packed_backend(graph);
  } catch (const Error& error) {
    throw with_context(error, std::string(model_name));
  }
  if (name && *name != backend)
    unsupported("{} was prepacked for backend '{}' and cannot run on '{}': use --device {}, or run the model from "
                "before mt-prepack", model_name, *name, backend, *name);
}

RunResult run_once(const Backend& backend, const Graph& graph, const PlanOptions& options,
                   const std::vector<HostArray>& inputs, DataCheck* data_check) {
  using Clock = std::chrono::steady_clock;
  RunResult result;
  const auto plan_start = Clock::now();
  DataCheck none;
  DataCheck& check = data_check != nullptr ? *data_check : none;
  auto plan = check.guard([&] { return backend.plan(graph, options); });
  check.wait();
  result.plan_seconds = std::chrono::duration<double>(Clock::now() - plan_start).count();

  if (inputs.size() != graph.inputs.size())
    fail(ExitCode::failure, "internal: {} input arrays for {} graph inputs", inputs.size(), graph.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) plan->bind_input(i, inputs[i].data.data());
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const TensorInfo& info = graph.tensor(graph.outputs[i]);
    HostArray out{.dtype = info.dtype, .shape = info.shape, .data = ConstData::allocate(info.byte_size())};
    plan->bind_output(i, out.data.mutable_data());
    result.outputs.push_back(std::move(out));
  }
  const auto run_start = Clock::now();
  plan->run();
  result.run_seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  result.memory = plan->memory();
  keep_valid_rows(graph, result.outputs);
  return result;
}

void keep_valid_rows(const Graph& graph, std::vector<HostArray>& outputs) {
  const auto counts = valid_row_counts(graph, ExitCode::invalid_input);
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    const auto it = counts.find(graph.outputs[i]);
    if (it == counts.end()) continue;
    const size_t k =
        static_cast<size_t>(std::find(graph.outputs.begin(), graph.outputs.end(), it->second) - graph.outputs.begin());
    const int64_t count = outputs[k].as<int64_t>()[0];
    outputs[i].shape[0] = std::clamp<int64_t>(count, 0, outputs[i].shape[0]);
  }
}

}  // namespace mt
