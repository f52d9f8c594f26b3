// One inference from host arrays: check that the model suits the backend, plan it, bind the
// inputs and freshly allocated outputs, run, and time it. What mt-run does between I/O.
#pragma once

#include <string_view>
#include <vector>

#include "lib/format/model_file.h"
#include "lib/io/npy.h"
#include "lib/runtime/backend.h"

namespace mt {

// Refuses (Error unsupported, with a hint) a model that mt-prepack prepared for a different
// backend than `backend` (metadata "backend").
void require_model_backend(const Graph& graph, std::string_view backend, std::string_view model_name);

struct RunResult {
  std::vector<HostArray> outputs;  // graph.outputs order; only their valid rows (keep_valid_rows)
  double plan_seconds = 0;
  double run_seconds = 0;
  MemoryStats memory;
};

// `inputs` in graph.inputs order, already checked against the declared dtypes and shapes.
// data_check: the model's data-section checksum still running (read_model(path, check)), waited for
// after planning and before the inference.
RunResult run_once(const Backend& backend, const Graph& graph, const PlanOptions& options,
                   const std::vector<HostArray>& inputs, DataCheck* data_check = nullptr);

// Shortens the leading dimension of each output whose valid rows are counted at run time
// (lib/ops/valid_rows.h) to that count, read from the count's own output: the arrays then hold
// what the model computed, the padding rows of its static plan left out.
void keep_valid_rows(const Graph& graph, std::vector<HostArray>& outputs);

}  // namespace mt
