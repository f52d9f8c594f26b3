#include "tests/ops/op_runner.h"

#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string_view>

#include "lib/core/float16.h"
#include "lib/ops/registry.h"
#include "lib/runtime/compare.h"

namespace mt::optest {
namespace {

HostArray random_data(const CaseInput& input, std::mt19937_64& rng) {
  HostArray array{.dtype = input.dtype, .shape = input.shape};
  const auto count = static_cast<size_t>(numel(input.shape));
  array.data = ConstData::allocate(count * dtype_size(input.dtype));
  std::byte* out = array.data.mutable_data();
  std::uniform_real_distribution<double> real(input.low, input.high);
  auto whole = [&] { return std::floor(real(rng)); };
  for (size_t i = 0; i < count; ++i) {
    const bool given = !input.values.empty();
    const double value = given ? input.values[i % input.values.size()] : 0.0;
    switch (input.dtype) {
      case DType::f32: reinterpret_cast<float*>(out)[i] = static_cast<float>(given ? value : real(rng)); break;
      case DType::f16:
        reinterpret_cast<uint16_t*>(out)[i] = float_to_half(static_cast<float>(given ? value : real(rng)));
        break;
      case DType::i8: reinterpret_cast<int8_t*>(out)[i] = static_cast<int8_t>(given ? value : whole()); break;
      case DType::u8: reinterpret_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(given ? value : whole()); break;
      case DType::i32: reinterpret_cast<int32_t*>(out)[i] = static_cast<int32_t>(given ? value : whole()); break;
      case DType::i64: reinterpret_cast<int64_t*>(out)[i] = static_cast<int64_t>(given ? value : whole()); break;
      case DType::boolean: reinterpret_cast<uint8_t*>(out)[i] = (given ? value : whole()) > 0 ? 1 : 0; break;
    }
  }
  return array;
}

}  // namespace

CaseGraph build_case(const std::string& op, const OpCase& c, uint64_t seed) {
  CaseGraph built;
  Graph& graph = built.graph;
  std::mt19937_64 rng(seed);
  Node node{.name = op + "_node", .op = op, .attrs = c.attrs};
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const CaseInput& input = c.inputs[i];
    if (input.absent) {
      node.inputs.emplace_back();
      continue;
    }
    const std::string name = (input.constant ? "const" : "input") + std::to_string(i);
    HostArray data = random_data(input, rng);
    TensorInfo info{.name = name, .dtype = input.dtype, .shape = input.shape, .quant = input.quant};
    if (input.constant) {
      info.data = data.data;
    } else {
      graph.inputs.push_back(name);
      built.inputs.push_back(std::move(data));
    }
    graph.add_tensor(std::move(info));
    node.inputs.push_back(name);
  }
  const int outputs = c.num_outputs;
  for (int i = 0; i < outputs; ++i) node.outputs.push_back("output" + std::to_string(i));
  graph.outputs = node.outputs;
  graph.nodes.push_back(std::move(node));
  graph.infer_shapes();
  for (size_t i = 0; i < c.output_quant.size() && i < graph.outputs.size(); ++i)
    graph.tensor(graph.outputs[i]).quant = c.output_quant[i];
  graph.validate();
  return built;
}

uint64_t case_seed(const std::string& op, const OpCase& c) {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : op + "/" + c.name) hash = (hash ^ ch) * 1099511628211ull;
  return hash;
}

std::set<std::string> selected_ops() {
  std::set<std::string> ops;
  if (const char* env = std::getenv("MT_OPS")) {
    std::stringstream list(env);
    for (std::string op; std::getline(list, op, ',');)
      if (!op.empty()) ops.insert(op);
  }
  return ops;
}

bool vulkan_required() {
  const char* value = std::getenv("MT_REQUIRE_VULKAN");
  return value != nullptr && std::string_view(value) == "1";
}

std::vector<HostArray> run_case(const Backend& backend, const CaseGraph& built, int threads) {
  PlanOptions options;
  options.threads = threads;
  return run_case(backend, built, options);
}

std::vector<HostArray> run_case(const Backend& backend, const CaseGraph& built, const PlanOptions& options) {
  auto plan = backend.plan(built.graph, options);
  for (size_t i = 0; i < built.inputs.size(); ++i) plan->bind_input(i, built.inputs[i].data.data());
  std::vector<HostArray> outputs;
  for (size_t i = 0; i < built.graph.outputs.size(); ++i) {
    const TensorInfo& info = built.graph.tensor(built.graph.outputs[i]);
    HostArray out{.dtype = info.dtype, .shape = info.shape, .data = ConstData::allocate(info.byte_size())};
    // Poison the output so that elements a backend forgets to write are caught.
    if (info.dtype == DType::f32)
      for (int64_t e = 0; e < info.numel(); ++e)
        reinterpret_cast<float*>(out.data.mutable_data())[e] = std::numeric_limits<float>::quiet_NaN();
    plan->bind_output(i, out.data.mutable_data());
    outputs.push_back(std::move(out));
  }
  plan->run();
  return outputs;
}

std::optional<std::string> first_mismatch(const HostArray& actual, const HostArray& expected, double tolerance,
                                          double integer_tolerance) {
  if (actual.dtype != expected.dtype || actual.shape != expected.shape)
    return fmt::format("output is {} {}, expected {} {}", dtype_name(actual.dtype), shape_str(actual.shape),
                       dtype_name(expected.dtype), shape_str(expected.shape));
  const auto count = static_cast<size_t>(expected.numel());
  const auto a = to_doubles(actual.dtype, actual.data.data(), count);
  const auto e = to_doubles(expected.dtype, expected.data.data(), count);
  const bool is_float = expected.dtype == DType::f32 || expected.dtype == DType::f16;
  double atol = integer_tolerance;
  if (is_float) {
    const TensorSummary range = summarize(e);
    atol = tolerance * std::max(1.0, range.max - range.min);
  }
  const Comparison cmp = compare_values(a, e, atol, 0.0);
  if (cmp.mismatches == 0) return std::nullopt;
  const size_t i = cmp.first_mismatch;
  return fmt::format("{} of {} elements differ (tolerance {:.3g}); first at {}: got {:.9g}, reference {:.9g}; max abs error {:.3g}",
                     cmp.mismatches, count, atol, index_str(i, expected.shape), a[i], e[i], cmp.max_abs_error);
}

}  // namespace mt::optest
