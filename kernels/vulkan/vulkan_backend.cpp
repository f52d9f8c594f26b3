#include "kernels/vulkan/vulkan_backend.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

#include "kernels/vulkan/runtime/context.h"
#include "kernels/vulkan/runtime/device_info.h"
#include "kernels/vulkan/runtime/instance.h"
#include "kernels/vulkan/ops/ops.h"
#include "kernels/vulkan/plan/kernel_table.h"
#include "kernels/vulkan/plan/packed_layout.h"
#include "kernels/vulkan/plan/prepack.h"
#include "kernels/vulkan/plan/vulkan_plan.h"
#include "lib/core/error.h"

namespace mt {
namespace {

// Ops that take or give bool tensors here (stored as 0.0 / 1.0): the logic family's, and the ops
// that only move elements.
const std::set<std::string, std::less<>> kBoolOps = {
    "equal",      "less",        "less_or_equal", "greater",   "greater_or_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not",   "where",     "reshape",          "flatten",
    "squeeze",    "unsqueeze",   "identity",      "transpose", "concat",           "split",
    "slice",      "expand",      "gather"};

class VulkanBackend final : public Backend {
 public:
  std::string_view name() const override { return "vulkan"; }

  // Decided from the graph alone, so that mt-opnames --check vulkan answers without a device.
  // float32 tensors, computed bool ones for the ops of kBoolOps, and int8 ones with parameters: the activations and weights of int8 nodes
  // (their first input is int8: the int8 table), quantize's output and dequantize's input; int8
  // conv2d and linear also take an int32 bias, gather its integer indices.
  std::optional<std::string> check_node(const Graph& graph, const Node& node) const override {
    const bool int8 = vulkan::is_int8_node(graph, node);
    const vulkan::VulkanKernel* kernel = vulkan::find_vulkan_kernel(graph, node);
    if (kernel == nullptr) return int8 ? "no int8 kernel" : "op not implemented";
    for (const auto* names : {&node.inputs, &node.outputs}) {
      const bool inputs = names == &node.inputs;
      for (size_t i = 0; i < names->size(); ++i) {
        const std::string& name = (*names)[i];
        if (name.empty() || !graph.has_tensor(name)) continue;
        // gather's integer indices are read at planning (they must be constant: its own check).
        if (node.op == "gather" && inputs && i == 1) continue;
        const TensorInfo& info = graph.tensor(name);
        const bool int8_allowed = int8 || (node.op == "quantize" && !inputs) || (node.op == "dequantize" && inputs);
        const bool int32_bias = int8 && inputs && i == 2 && (node.op == "conv2d" || node.op == "linear");
        if (info.dtype == DType::boolean && kBoolOps.count(node.op)) {
          // Held as 0.0 / 1.0 in the float buffers; converted on the host at the graph's edges.
          if (info.is_constant()) return fmt::format("constant bool tensor '{}' not supported", name);
        } else if (!(info.dtype == DType::f32 || (info.dtype == DType::i8 && int8_allowed) ||
                     (info.dtype == DType::i32 && int32_bias))) {
          return fmt::format("dtype {} not supported (tensor '{}')", dtype_name(info.dtype), name);
        }
        if (!info.layout.empty()) {
          if (!inputs) return fmt::format("tensor '{}' has layout '{}', which vulkan does not read", name, info.layout);
          if (auto reason = vulkan::check_stored_layout(graph, node, i)) return reason;
        }
        if (info.quant && info.dtype != DType::i8 && !int32_bias)
          return fmt::format("quantized tensor '{}' not supported", name);
        if (info.dtype == DType::i8 && !info.quant)
          return fmt::format("int8 tensor '{}' has no quantization parameters", name);
        if (info.shape.size() > static_cast<size_t>(vulkan::kMaxRank))
          return fmt::format("rank {} not supported (tensor '{}', at most {})", info.shape.size(), name, vulkan::kMaxRank);
        if (info.numel() * 4 > INT32_MAX) return fmt::format("tensor '{}' too large ({} elements)", name, info.numel());
      }
    }
    return kernel->check != nullptr ? kernel->check(graph, node) : std::nullopt;
  }

  std::unique_ptr<ExecutionPlan> plan(const Graph& graph, const PlanOptions& options) const override {
    require_supported(*this, graph);
    if (const auto packed = packed_precision(graph); packed && *packed != options.precision)
      fail(ExitCode::usage, "precision {} asked for, but the model was prepacked for vulkan {}: leave --precision out, or "
           "prepack the unpacked model with --precision {}", options.precision, *packed, options.precision);
    auto context = vulkan::Context::get(options.gpu_index);
    return std::make_unique<vulkan::VulkanPlan>(graph, options, std::move(context));
  }

  bool can_prepack() const override { return true; }

  // Refuses a model with nodes vulkan cannot run (int8 ones without an int8 shader, say) before
  // rewriting anything, naming every such node: a prepacked model is one that runs here.
  void prepack(Graph& graph, const PrepackOptions& options) const override {
    require_supported(*this, graph);
    const vulkan::PrepackStats stats = vulkan::prepack_graph(graph, options);
    spdlog::debug("vulkan: {} constants stored in the shaders' layouts ({})", stats.weights_packed, options.precision);
  }

  // Why this machine cannot run the backend (no loader, no device: the counterpart of PyTorch's
  // is_vulkan_available()), or each device's type, driver, limits and fp16/int8 features.
  std::string devices(std::string_view indent) const override {
    if (auto reason = vulkan::vulkan_unavailable_reason()) return fmt::format("{}unavailable: {}\n", indent, *reason);
    return vulkan::format_device_list(indent);
  }

  std::string describe(int device_index) const override {
    const std::vector<vulkan::DeviceInfo> devices = vulkan::enumerate_devices();
    if (device_index < 0 || static_cast<size_t>(device_index) >= devices.size())
      unsupported("vulkan: no device {} ({} found)", device_index, devices.size());
    const vulkan::DeviceInfo& device = devices[device_index];
    return device.driver_info.empty() ? device.name : fmt::format("{} ({})", device.name, device.driver_info);
  }
};

}  // namespace

std::unique_ptr<Backend> make_vulkan_backend() { return std::make_unique<VulkanBackend>(); }

}  // namespace mt
