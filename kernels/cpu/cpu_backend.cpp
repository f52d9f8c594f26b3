#include "kernels/cpu/cpu_backend.h"

#include "kernels/cpu/plan/cpu_plan.h"
#include "kernels/cpu/plan/kernel_table.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "kernels/cpu/plan/prepack.h"
#include "lib/core/error.h"

namespace mt {
namespace {

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }

  std::optional<std::string> check_node(const Graph& graph, const Node& node) const override {
    const bool int8 = cpu::is_int8_node(graph, node);
    const cpu::CpuKernel* kernel = cpu::find_cpu_kernel(graph, node);
    if (kernel == nullptr) return int8 ? "int8 op not implemented" : "op not implemented";
    // The kernel's own check runs once, first; its reason is given after the tensors' (a layout or
    // quantization the backend does not read says more).
    std::optional<std::string> kernel_refusal = kernel->check ? kernel->check(graph, node) : std::nullopt;
    for (const auto* names : {&node.inputs, &node.outputs}) {
      for (const auto& name : *names) {
        if (name.empty() || !graph.has_tensor(name)) continue;
        const TensorInfo& info = graph.tensor(name);
        if (auto reason = cpu::check_layout(graph, node, name, /*node_checked=*/!kernel_refusal)) return reason;
        // The int8 kernels and quantize/dequantize check their quantization parameters.
        if (info.quant && !int8 && node.op != "quantize" && node.op != "dequantize")
          return fmt::format("quantized tensor '{}' not supported", name);
      }
    }
    return kernel_refusal;
  }

  std::unique_ptr<ExecutionPlan> plan(const Graph& graph, const PlanOptions& options) const override {
    // XNNPACK is initialised by the first node planned on one of its operators (initialize_xnnpack).
    require_supported(*this, graph);
    // Weights stored for a kernel this plan does not take (a CPU without the instructions, a cap or
    // a switch turning it off) are refused before anything is planned.
    if (auto reason = cpu::check_packed_weights(graph, cpu::plan_paths(options), options)) unsupported("{}", *reason);
    return std::make_unique<cpu::CpuPlan>(graph, options);
  }

  bool can_prepack() const override { return true; }
  void prepack(Graph& graph, const PrepackOptions& options) const override { cpu::prepack_graph(graph, options); }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace mt
