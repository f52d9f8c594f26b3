#include "lib/passes/verify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>

#include "lib/core/error.h"

namespace mt::passes {
namespace {

template <typename T>
void fill_bits(std::byte* bytes, size_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> bit(0, 1);
  for (size_t i = 0; i < count; ++i) {
    const T value = static_cast<T>(bit(rng));
    std::memcpy(bytes + i * sizeof(T), &value, sizeof(T));
  }
}

// Image-like values for a float NCHW input: each H x W plane is a coarse grid of at most 8 x 8
// standard normal values interpolated bilinearly, plus a little white noise. Networks whose
// statistics were fitted on images stay in range on these; on white noise of the same size their
// activations grow by orders of magnitude and rounding differences swamp any tolerance.
void fill_smooth_planes(float* out, const Shape& shape, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t planes = shape[0] * shape[1], height = shape[2], width = shape[3];
  const int64_t grid_h = std::min<int64_t>(height, 8), grid_w = std::min<int64_t>(width, 8);
  std::vector<float> grid(static_cast<size_t>(grid_h * grid_w));
  auto position = [](int64_t i, int64_t size, int64_t grid_size) {
    return size > 1 ? static_cast<double>(i) * static_cast<double>(grid_size - 1) / static_cast<double>(size - 1) : 0.0;
  };
  for (int64_t p = 0; p < planes; ++p) {
    for (auto& g : grid) g = normal(rng);
    for (int64_t y = 0; y < height; ++y) {
      const double fy = position(y, height, grid_h);
      const auto y0 = static_cast<int64_t>(fy);
      const int64_t y1 = std::min(y0 + 1, grid_h - 1);
      const double ty = fy - static_cast<double>(y0);
      for (int64_t x = 0; x < width; ++x) {
        const double fx = position(x, width, grid_w);
        const auto x0 = static_cast<int64_t>(fx);
        const int64_t x1 = std::min(x0 + 1, grid_w - 1);
        const double tx = fx - static_cast<double>(x0);
        auto at = [&](int64_t gy, int64_t gx) { return static_cast<double>(grid[static_cast<size_t>(gy * grid_w + gx)]); };
        const double value = (1 - ty) * ((1 - tx) * at(y0, x0) + tx * at(y0, x1)) + ty * ((1 - tx) * at(y1, x0) + tx * at(y1, x1));
        out[(p * height + y) * width + x] = static_cast<float>(value + 0.1 * normal(rng));
      }
    }
  }
}

HostArray random_array(const TensorInfo& info, std::mt19937_64& rng) {
  HostArray array{.dtype = info.dtype, .shape = info.shape, .data = ConstData::allocate(info.byte_size())};
  const auto count = static_cast<size_t>(info.numel());
  std::byte* bytes = array.data.mutable_data();
  switch (info.dtype) {
    case DType::f32: {
      if (info.shape.size() == 4 && count > 0) {
        fill_smooth_planes(reinterpret_cast<float*>(bytes), info.shape, rng);
        break;
      }
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (size_t i = 0; i < count; ++i) {
        const float value = normal(rng);
        std::memcpy(bytes + i * sizeof(float), &value, sizeof(float));
      }
      break;
    }
    case DType::i64: fill_bits<int64_t>(bytes, count, rng); break;
    case DType::i32: fill_bits<int32_t>(bytes, count, rng); break;
    case DType::i8: fill_bits<int8_t>(bytes, count, rng); break;
    case DType::u8:
    case DType::boolean: fill_bits<uint8_t>(bytes, count, rng); break;
    case DType::f16: break;  // zeros: float16 inputs are rare and the reference kernels barely take them
  }
  return array;
}

// Runs `graph` on `inputs` and returns the outputs named `wanted` (graph outputs or any other
// tensor: those are made extra outputs of a copy of the graph), as doubles.
std::vector<std::vector<double>> run(const Backend& backend, const Graph& graph, const std::vector<HostArray>& inputs,
                                     const std::vector<std::string>& wanted) {
  Graph runnable = graph;
  for (const auto& name : wanted)
    if (std::find(runnable.outputs.begin(), runnable.outputs.end(), name) == runnable.outputs.end())
      runnable.outputs.push_back(name);
  std::unique_ptr<ExecutionPlan> plan;
  try {
    plan = backend.plan(runnable, PlanOptions{});
  } catch (const Error& error) {
    throw with_context(error, fmt::format("cannot verify with the {} backend (use --no-verify to skip)", backend.name()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) plan->bind_input(i, inputs[i].data.data());
  plan->run();
  std::vector<std::vector<double>> results;
  for (const auto& name : wanted) {
    const size_t index = static_cast<size_t>(
        std::find(runnable.outputs.begin(), runnable.outputs.end(), name) - runnable.outputs.begin());
    const TensorInfo& info = runnable.tensor(name);
    results.push_back(to_doubles(info.dtype, plan->output_data(index), static_cast<size_t>(info.numel())));
  }
  return results;
}

std::optional<Divergence> diverges(const std::string& name, const Shape& shape, const std::vector<double>& actual,
                                   const std::vector<double>& expected, double atol, double* worst = nullptr) {
  const Comparison comparison = compare_values(actual, expected, 0.0, 0.0);
  const double tolerance = atol >= 0 ? atol : kRelativeTolerance * comparison.expected_range() + kToleranceFloor;
  if (worst) *worst = std::max(*worst, comparison.max_abs_error);
  // max_abs_error is infinite when a NaN or infinity does not match, so this catches those too.
  if (comparison.max_abs_error <= tolerance) return std::nullopt;
  return Divergence{name, shape, comparison, tolerance};
}

}  // namespace

std::vector<HostArray> verification_inputs(const Graph& graph, const std::map<std::string, HostArray>& given,
                                           uint64_t seed) {
  for (const auto& [name, array] : given)
    if (std::find(graph.inputs.begin(), graph.inputs.end(), name) == graph.inputs.end())
      fail(ExitCode::usage, "--verify-input: the model has no input '{}' (its inputs: {})", name,
           fmt::join(graph.inputs, ", "));
  std::mt19937_64 rng(seed);
  std::vector<HostArray> inputs;
  for (const auto& name : graph.inputs) {
    const TensorInfo& info = graph.tensor(name);
    auto it = given.find(name);
    if (it == given.end()) {
      inputs.push_back(random_array(info, rng));
      continue;
    }
    const HostArray& array = it->second;
    if (array.dtype != info.dtype || array.shape != info.shape)
      invalid_input("--verify-input {}: the data is {} {}, the model's input is {} {}", name, dtype_name(array.dtype),
                    shape_str(array.shape), dtype_name(info.dtype), shape_str(info.shape));
    inputs.push_back(array);
  }
  return inputs;
}

std::string Divergence::describe() const {
  const Comparison& c = comparison;
  return fmt::format("'{}' max abs error {:.3g} > {:.3g} at {} (original values in [{:.4g}, {:.4g}], {} of {} elements off)",
                     tensor, c.max_abs_error, tolerance, index_str(c.worst_index, shape), c.expected_min, c.expected_max,
                     c.mismatches, c.count);
}

std::string VerifyResult::message() const {
  if (!output)
    return fmt::format("{} output{} match{} (max abs error {:.3g})", outputs_compared == 1 ? "the" : fmt::format("all {}", outputs_compared),
                       outputs_compared == 1 ? "" : "s", outputs_compared == 1 ? "es" : "", worst_output_error);
  std::string text = "output " + output->describe();
  if (first_tensor && first_tensor->tensor != output->tensor)
    text += "; first diverging tensor present in both models: " + first_tensor->describe();
  else if (!first_tensor)
    text += "; no tensor present in both models diverges before it";
  return text;
}

Verifier::Verifier(const Graph& original, const Backend& backend, std::vector<HostArray> inputs, double atol)
    : original_(original), backend_(backend), inputs_(std::move(inputs)), atol_(atol) {
  expected_ = run(backend_, original_, inputs_, original_.outputs);
}

VerifyResult Verifier::check(const Graph& candidate) const {
  if (candidate.inputs != original_.inputs || candidate.outputs != original_.outputs)
    fail(ExitCode::failure, "internal: the optimised graph's inputs or outputs differ from the original's");
  VerifyResult result;
  const auto actual = run(backend_, candidate, inputs_, candidate.outputs);
  for (size_t i = 0; i < actual.size(); ++i) {
    ++result.outputs_compared;
    const std::string& name = candidate.outputs[i];
    auto divergence = diverges(name, candidate.tensor(name).shape, actual[i], expected_[i], atol_, &result.worst_output_error);
    if (divergence && !result.output) result.output = std::move(divergence);
  }
  if (result.ok()) return result;

  // Tensors both graphs compute under the same name, in the original's order. Passes keep a name
  // only for a tensor whose values they do not change, so these should all agree.
  std::vector<std::string> shared;
  for (const auto& node : original_.nodes)
    for (const auto& out : node.outputs) {
      if (!candidate.has_tensor(out)) continue;
      const TensorInfo& a = original_.tensor(out);
      const TensorInfo& b = candidate.tensor(out);
      if (a.dtype == b.dtype && a.shape == b.shape) shared.push_back(out);
    }
  const auto before = run(backend_, original_, inputs_, shared);
  const auto after = run(backend_, candidate, inputs_, shared);
  for (size_t i = 0; i < shared.size(); ++i)
    if (auto divergence = diverges(shared[i], original_.tensor(shared[i]).shape, after[i], before[i], atol_)) {
      result.first_tensor = std::move(divergence);
      break;
    }
  return result;
}

}  // namespace mt::passes
