#include "kernels/cpu/plan/packed_forms.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include "kernels/cpu/plan/kernel_table.h"
#include "kernels/cpu/plan/prepack.h"
#include "lib/core/error.h"

namespace mt::cpu {

// The op families with packed weights, each beside its planner (ops/*.cpp): which layout its kernel
// reads an input in (the planner's own choice), and the packing functions making it.
std::optional<CpuLayout> conv2d_weight_layout(const Graph&, const Node&, size_t, const KernelPaths&);
void pack_conv2d_weights(const Graph&, const Node&, CpuLayout, void*);
std::optional<CpuLayout> linear_weight_layout(const Graph&, const Node&, size_t, const KernelPaths&);
void pack_linear_weights(const Graph&, const Node&, CpuLayout, void*);
std::optional<CpuLayout> conv2d_int8_weight_layout(const Graph&, const Node&, size_t, const KernelPaths&);
std::optional<CpuLayout> linear_int8_weight_layout(const Graph&, const Node&, size_t, const KernelPaths&);
void pack_int8_weights(const Graph&, const Node&, CpuLayout, void*);

namespace {

struct PackedOp {
  std::string_view op;
  bool int8;  // the op's int8 kernel (cpu::is_int8_node)
  std::optional<CpuLayout> (*layout)(const Graph&, const Node&, size_t input, const KernelPaths&);
  void (*pack)(const Graph&, const Node&, CpuLayout, void* memory);
};
constexpr PackedOp kOps[] = {
    {"conv2d", false, conv2d_weight_layout, pack_conv2d_weights},
    {"linear", false, linear_weight_layout, pack_linear_weights},
    {"conv2d", true, conv2d_int8_weight_layout, pack_int8_weights},
    {"linear", true, linear_int8_weight_layout, pack_int8_weights},
};

// Every layout, the kernel path that reads it, and what that path needs.
struct LayoutLine {
  CpuLayout layout;
  LayoutNeeds needs;
};
constexpr bool KernelPaths::*kGemm = &KernelPaths::packed_gemm;
constexpr bool KernelPaths::*kVnni = &KernelPaths::int8_vnni;
constexpr const char* kAvx512f = "AVX-512F";
constexpr const char* kAvx512Int8 = "AVX512-VNNI, -BW, -VL and -VBMI";
constexpr LayoutLine kLayouts[] = {
    {CpuLayout::gemm, {kGemm, &PlanOptions::packed_gemm, "MT_CPU_AVX512_GEMM", "the packed GEMM", kAvx512f}},
    {CpuLayout::winograd4, {nullptr, &PlanOptions::winograd, "MT_CPU_WINOGRAD", "Winograd F(4x4, 3x3)", ""}},
    {CpuLayout::winograd2, {nullptr, &PlanOptions::winograd, "MT_CPU_WINOGRAD", "Winograd F(2x2, 3x3)", ""}},
    {CpuLayout::winograd4_gemm,
     {kGemm, &PlanOptions::packed_gemm, "MT_CPU_AVX512_GEMM", "Winograd F(4x4, 3x3) on the packed GEMM", kAvx512f}},
    {CpuLayout::winograd2_gemm,
     {kGemm, &PlanOptions::packed_gemm, "MT_CPU_AVX512_GEMM", "Winograd F(2x2, 3x3) on the packed GEMM", kAvx512f}},
    {CpuLayout::vnni_gemm, {kVnni, &PlanOptions::int8_vnni, "MT_CPU_INT8_VNNI", "the int8 VNNI GEMM", kAvx512Int8}},
    {CpuLayout::vnni_gemm_gathered,
     {kVnni, &PlanOptions::int8_vnni, "MT_CPU_INT8_VNNI", "the int8 VNNI GEMM", kAvx512Int8}},
    {CpuLayout::vnni_depthwise,
     {kVnni, &PlanOptions::int8_vnni, "MT_CPU_INT8_VNNI", "the int8 VNNI depthwise conv", kAvx512Int8}},
    {CpuLayout::depthwise,
     {&KernelPaths::depthwise, &PlanOptions::depthwise, "MT_CPU_DEPTHWISE", "the depthwise conv", kAvx512f}},
    {CpuLayout::stem, {&KernelPaths::stem_conv, &PlanOptions::stem_conv, "MT_CPU_STEM_CONV", "the stem conv", kAvx512f}},
};

const PackedOp* packed_op(const Graph& graph, const Node& node) {
  const bool int8 = is_int8_node(graph, node);
  for (const PackedOp& op : kOps)
    if (op.op == node.op && op.int8 == int8) return &op;
  return nullptr;
}

bool is_winograd_points(CpuLayout layout) { return layout == CpuLayout::winograd4 || layout == CpuLayout::winograd2; }

// The Winograd points a GEMM form is packed from.
std::optional<CpuLayout> points_of(CpuLayout layout) {
  if (layout == CpuLayout::winograd4_gemm) return CpuLayout::winograd4;
  if (layout == CpuLayout::winograd2_gemm) return CpuLayout::winograd2;
  return std::nullopt;
}

}  // namespace

std::optional<CpuLayout> weight_layout(const Graph& graph, const Node& node, size_t input, const KernelPaths& paths,
                                       bool node_checked) {
  const PackedOp* op = packed_op(graph, node);
  if (op == nullptr || input >= node.inputs.size() || node.inputs[input].empty()) return std::nullopt;
  // Only for a node the backend runs: the choice reads attributes and parameters its check vouches for.
  if (!node_checked) {
    const CpuKernel* kernel = find_cpu_kernel(graph, node);
    if (kernel == nullptr || (kernel->check != nullptr && kernel->check(graph, node))) return std::nullopt;
  }
  return op->layout(graph, node, input, paths);
}

bool packs_from(CpuLayout layout, const TensorInfo& stored) {
  if (stored.layout.empty() || stored.layout == kLayoutOhwi) return true;
  const std::optional<CpuLayout> from = parse_cpu_layout(stored.layout);
  return from && points_of(layout) == from;
}

void pack_weights(const Graph& graph, const Node& node, size_t input, CpuLayout layout, void* memory) {
  const PackedOp* op = packed_op(graph, node);
  const TensorInfo& w = graph.tensor(node.inputs.at(input));
  if (op == nullptr || input != 1 || !packs_from(layout, w))
    fail(ExitCode::failure, "internal: node '{}' ({}) has no packing into '{}' from '{}'", node.name, node.op,
         cpu_layout_tag(layout), w.layout);
  op->pack(graph, node, layout, memory);
}

LayoutNeeds layout_needs(CpuLayout layout) {
  for (const LayoutLine& line : kLayouts)
    if (line.layout == layout) return line.needs;
  fail(ExitCode::failure, "internal: cpu layout {} has no line in kLayouts", static_cast<int>(layout));
}

const void* packed_weights(NodeContext& c, size_t input, CpuLayout layout) {
  const TensorInfo& w = c.input_info(input);
  const uint64_t bytes = stored_byte_size(w.dtype, w.shape, cpu_layout_tag(layout));
  // Stored so by mt-prepack: read in place (the reader checked its size). The depthwise kernel loads
  // its weights 64 bytes at a time, aligned: a model decoded from a buffer of other alignment is copied.
  const bool stored = w.layout == cpu_layout_tag(layout);
  if (stored && w.data.size() != bytes)
    fail(ExitCode::failure, "internal: tensor '{}' holds {} bytes in layout '{}', {} expected", w.name, w.data.size(),
         w.layout, bytes);
  if (stored && reinterpret_cast<uintptr_t>(w.data.data()) % 64 == 0) return c.constant_in_place(input);
  void* memory = c.keep(static_cast<size_t>(bytes));
  if (stored) {
    std::memcpy(memory, w.data.data(), w.data.size());
    return memory;
  }
  pack_weights(c.graph(), c.node(), input, layout, memory);
  return memory;
}

std::optional<std::string> check_packed_weights(const Graph& graph, const KernelPaths& paths,
                                                const PlanOptions& options) {
  // A constant handed out as a graph output is copied row-major: mt-prepack never stores one in a layout.
  for (const auto& name : graph.outputs)
    if (const TensorInfo& t = graph.tensor(name); t.is_constant() && !t.layout.empty())
      return fmt::format("graph output '{}' is a constant stored in layout '{}'; cpu returns constants row-major", name,
                         t.layout);
  size_t refused = 0;
  std::string first;
  for (const Node& node : graph.nodes) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (node.inputs[i].empty()) continue;
      const TensorInfo& w = graph.tensor(node.inputs[i]);
      const std::optional<CpuLayout> stored = parse_cpu_layout(w.layout);
      if (!stored) continue;
      const std::optional<CpuLayout> wanted = weight_layout(graph, node, i, paths, /*node_checked=*/true);
      if (wanted == stored || (wanted && packs_from(*wanted, w))) continue;
      if (refused++ > 0) continue;
      // Why this plan's kernel differs: the stored layout's kernel is off here (turned off, the target
      // cap excludes its instructions, the CPU lacks them), or Winograd is.
      const LayoutNeeds needs = layout_needs(*stored);
      const bool off = needs.path != nullptr && !(paths.*needs.path);
      std::string why;
      if (off && !(options.*needs.option)) why = fmt::format("{} is turned off ({}=0)", needs.kernel, needs.variable);
      else if (off && options.cpu_target && !(target_paths(*options.cpu_target).*needs.path))
        why = fmt::format("{} needs {}, which the target {} (MT_CPU_TARGET) excludes", needs.kernel, needs.instructions,
                          cpu_target_name(*options.cpu_target));
      else if (off) why = fmt::format("{} needs {}, which this CPU lacks", needs.kernel, needs.instructions);
      else if (!options.winograd && (is_winograd_points(*stored) || points_of(*stored)))
        why = "Winograd is turned off (MT_CPU_WINOGRAD=0)";
      else why = fmt::format("this plan runs node '{}' on another kernel", node.name);
      first = fmt::format("tensor '{}' is stored for {} (layout '{}'), but {}", w.name, needs.kernel, w.layout, why);
    }
  }
  if (refused == 0) return std::nullopt;
  return fmt::format("{}{}: plan the model from before mt-prepack, or prepack it for this CPU (mt-prepack --cpu)",
                     first, refused > 1 ? fmt::format(" (and {} more weights)", refused - 1) : "");
}

}  // namespace mt::cpu
