// What mt-run reports about outputs: per-output summaries, top-k classes with labels, checks
// against reference arrays, and file names for --output-dir.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lib/io/npy.h"
#include "lib/ir/graph.h"
#include "lib/runtime/compare.h"

namespace mt {

// "NAME=FILE" naming a graph output, or "FILE" when the model has one output besides the counts
// of valid rows of its others (lib/ops/valid_rows.h). `flag` names the option in errors
// ("--output", "--compare").
struct OutputSpec {
  size_t index = 0;  // into graph.outputs
  std::string path;
};
OutputSpec parse_output_spec(const Graph& graph, const std::string& spec, std::string_view flag);

// A file name for a tensor: characters other than letters, digits, '.', '-' and '_' become '_'
// ("/classifier/Gemm_output_0" -> "_classifier_Gemm_output_0"); ".npy" appended.
std::string output_file_name(const std::string& tensor_name);

// Labels, one per line (class i on line i + 1); a trailing empty line is ignored.
std::vector<std::string> read_labels(const std::string& path);

// The k largest values along the last axis, for each row (product of the leading dims).
struct TopEntry {
  size_t index = 0;
  double value = 0;
};
std::vector<std::vector<TopEntry>> top_k(const HostArray& array, size_t k);

// Tolerances of a check: every element must satisfy |out - ref| <= atol + rtol * |ref|, where
// atol is atol_range * (max(ref) - min(ref)) when atol_range is set; and the cosine similarity
// must be at least min_cosine when set.
struct CheckOptions {
  double atol = 1e-4;
  double rtol = 1e-4;
  std::optional<double> atol_range;
  std::optional<double> min_cosine;
};
struct CheckResult {
  Comparison comparison;
  double atol = 0;  // the absolute tolerance applied
  bool passed = false;
  std::string failure;  // why it failed: "12 elements exceed ..., first at [0, 3]: 1.5 vs 1.25"
};
// Compares an output with a reference array; a dtype or shape difference is Error(invalid_input)
// naming `name` and `ref_source`.
CheckResult check_output(const std::string& name, const HostArray& output, const HostArray& ref,
                         const std::string& ref_source, const CheckOptions& options);

}  // namespace mt
