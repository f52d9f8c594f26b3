#include "lib/runtime/report.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>
#include <set>

#include "lib/core/error.h"
#include "lib/core/file_io.h"
#include "lib/ops/valid_rows.h"

namespace mt {

OutputSpec parse_output_spec(const Graph& graph, const std::string& spec, std::string_view flag) {
  // A bare FILE means the one output that is not another's count of valid rows.
  std::vector<size_t> results;
  std::set<std::string> counts;
  for (const auto& [name, count] : valid_row_counts(graph, ExitCode::invalid_input)) counts.insert(count);
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    if (!counts.count(graph.outputs[i])) results.push_back(i);
  if (const size_t eq = spec.find('='); eq != std::string::npos) {
    const std::string name = spec.substr(0, eq);
    for (size_t i = 0; i < graph.outputs.size(); ++i)
      if (graph.outputs[i] == name) {
        if (eq + 1 == spec.size()) fail(ExitCode::usage, "{} {}: no file named", flag, spec);
        return {i, spec.substr(eq + 1)};
      }
    if (results.size() != 1)
      fail(ExitCode::usage, "{} {}: the model has no output '{}' (outputs: {})", flag, spec, name,
           fmt::join(graph.outputs, ", "));
  }
  if (results.size() != 1)
    fail(ExitCode::usage, "{} {}: the model has {} outputs, so name one as NAME=FILE (outputs: {})", flag, spec,
         graph.outputs.size(), fmt::join(graph.outputs, ", "));
  return {results[0], spec};
}

std::string output_file_name(const std::string& tensor_name) {
  std::string name = tensor_name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (name.empty() || name == "." || name == "..") name = "_" + name;
  return name + ".npy";
}

std::vector<std::string> read_labels(const std::string& path) {
  const InputBytes input = read_input(path);
  std::string_view text(reinterpret_cast<const char*>(input.data), input.size);
  std::vector<std::string> labels;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    labels.emplace_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return labels;
}

std::vector<std::vector<TopEntry>> top_k(const HostArray& array, size_t k) {
  const size_t count = static_cast<size_t>(array.numel());
  const size_t classes = array.shape.empty() ? 1 : static_cast<size_t>(array.shape.back());
  const auto values = to_doubles(array.dtype, array.data.data(), count);
  std::vector<std::vector<TopEntry>> rows;
  if (classes == 0) return rows;
  std::vector<size_t> order(classes);
  for (size_t row = 0; row * classes < count; ++row) {
    const double* v = values.data() + row * classes;
    std::iota(order.begin(), order.end(), size_t{0});
    const size_t n = std::min(k, classes);
    // Largest first; NaN last; ties by index.
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(), [&](size_t a, size_t b) {
      if (std::isnan(v[a]) != std::isnan(v[b])) return std::isnan(v[b]);
      return v[a] > v[b] || (v[a] == v[b] && a < b);
    });
    std::vector<TopEntry> entries;
    for (size_t i = 0; i < n; ++i) entries.push_back({order[i], v[order[i]]});
    rows.push_back(std::move(entries));
  }
  return rows;
}

CheckResult check_output(const std::string& name, const HostArray& output, const HostArray& ref,
                         const std::string& ref_source, const CheckOptions& options) {
  if (output.shape != ref.shape)
    invalid_input("output '{}' is {} {} but the reference {} is {} {}", name, dtype_name(output.dtype),
                  shape_str(output.shape), ref_source, dtype_name(ref.dtype), shape_str(ref.shape));
  const bool output_float = output.dtype == DType::f32 || output.dtype == DType::f16;
  const bool ref_float = ref.dtype == DType::f32 || ref.dtype == DType::f16;
  if (output_float != ref_float)
    invalid_input("output '{}' is {} but the reference {} is {}", name, dtype_name(output.dtype), ref_source,
                  dtype_name(ref.dtype));
  const size_t count = static_cast<size_t>(output.numel());
  const auto actual = to_doubles(output.dtype, output.data.data(), count);
  const auto expected = to_doubles(ref.dtype, ref.data.data(), count);

  CheckResult result;
  result.atol = options.atol;
  if (options.atol_range) {
    const TensorSummary range = summarize(expected);
    result.atol = *options.atol_range * (range.max - range.min);
  }
  result.comparison = compare_values(actual, expected, result.atol, options.rtol);
  const Comparison& c = result.comparison;
  std::vector<std::string> problems;
  if (c.mismatches > 0)
    problems.push_back(fmt::format("{} of {} elements exceed {:.3g} + {:.3g} * |ref|, first at {}: {:.8g} vs {:.8g}",
                                   c.mismatches, c.count, result.atol, options.rtol,
                                   index_str(c.first_mismatch, output.shape), actual[c.first_mismatch],
                                   expected[c.first_mismatch]));
  if (options.min_cosine && !(c.cosine >= *options.min_cosine))
    problems.push_back(fmt::format("cosine {:.8f} is below {:.8f}", c.cosine, *options.min_cosine));
  result.passed = problems.empty();
  result.failure = fmt::format("{}", fmt::join(problems, "; "));
  return result;
}

}  // namespace mt
