#include "tests/ops/option_matrix.h"

namespace mt::optest {
namespace {

// vulkan fp16: allowed max abs error relative to max(1, range of the reference output), as
// OpCase::tolerance. fp16 keeps 11 significant bits: a value is stored within 2^-11 (4.9e-4) of
// itself, so copies and selections (shape ops, relu, max pooling, nearest resize) get 3e-3, enough
// for values up to 6 times the output's range. Element-wise arithmetic rounds its inputs and its
// result (4e-3). floor and ceil move by 1 when rounding carries an input across an integer (the
// cases span 7 to 8 integers). Sums, convolutions and matrix products accumulate in fp32 but read
// fp16-rounded inputs and weights: the error of an N-term sum grows like sqrt(N), 1e-2 covers N up
// to several hundred here. Softmax of logits as large as 90 (stored within 0.03) moves
// probabilities by up to 3% of their value (2e-2).
constexpr double kCopy = 3e-3, kArithmetic = 4e-3, kSum = 1e-2;
const std::map<std::string, double, std::less<>> kFp16Tolerance = {
    {"add", kArithmetic},
    {"sub", kArithmetic},
    {"mul", kArithmetic},
    {"div", kArithmetic},
    {"pow", kArithmetic},
    {"prelu", kArithmetic},
    {"max", kCopy},
    {"min", kCopy},
    {"relu", kCopy},
    {"clamp", kCopy},
    {"leaky_relu", kArithmetic},
    {"neg", kCopy},
    {"abs", kCopy},
    {"sigmoid", kArithmetic},
    {"tanh", kArithmetic},
    {"hardswish", kArithmetic},
    {"hardsigmoid", kArithmetic},
    {"silu", kArithmetic},
    {"gelu", kArithmetic},
    {"elu", kArithmetic},
    {"exp", kArithmetic},
    {"log", kArithmetic},
    {"sqrt", kArithmetic},
    {"reciprocal", kArithmetic},
    {"erf", kArithmetic},
    {"softplus", kArithmetic},
    {"floor", 0.15},
    {"ceil", 0.15},
    {"reduce_mean", kSum},
    {"reduce_sum", kSum},
    {"reduce_max", kCopy},
    {"reduce_min", kCopy},
    {"softmax", 2e-2},
    {"log_softmax", 2e-2},
    {"batch_norm", kArithmetic},
    {"layer_norm", kSum},
    {"linear", kSum},
    {"matmul", kSum},
    {"conv2d", kSum},
    {"conv_transpose2d", kSum},
    {"max_pool2d", kCopy},
    {"avg_pool2d", kSum},
    {"global_avg_pool", kSum},
    {"global_max_pool", kCopy},
    {"resize", kArithmetic},
    {"pad", kCopy},
    {"reshape", kCopy},
    {"flatten", kCopy},
    {"squeeze", kCopy},
    {"unsqueeze", kCopy},
    {"identity", kCopy},
    {"transpose", kCopy},
    {"concat", kCopy},
    {"split", kCopy},
    {"slice", kCopy},
    {"expand", kCopy},
    {"gather", kCopy},
    // The logic family: exact. Bool results compare exactly whatever the tolerance; comparisons read
    // fp16-rounded inputs, so their cases use values fp16 holds exactly; where selects (a copy).
    {"equal", kCopy},
    {"less", kCopy},
    {"less_or_equal", kCopy},
    {"greater", kCopy},
    {"greater_or_equal", kCopy},
    {"logical_and", kCopy},
    {"logical_or", kCopy},
    {"logical_xor", kCopy},
    {"logical_not", kCopy},
    {"where", kCopy},
    // int8 <-> float32 conversions at the graph's edges.
    {"quantize", kCopy},
    {"dequantize", kArithmetic},
};

PlanOptions cpu_options(int threads, bool own_kernels = true, bool winograd = true, bool depthwise_and_stems = true) {
  PlanOptions options;
  options.depthwise = depthwise_and_stems;
  options.stem_conv = depthwise_and_stems;
  options.threads = threads;
  options.packed_gemm = own_kernels;
  options.int8_vnni = own_kernels;
  options.winograd = winograd;
  return options;
}

PlanOptions generic_options() {
  PlanOptions options = cpu_options(1);
  options.cpu_target = CpuTarget::generic;
  return options;
}

PlanOptions vulkan_options(const std::string& precision, std::optional<bool> int8_dot = std::nullopt) {
  PlanOptions options;
  options.precision = precision;
  options.vulkan_int8_dot = int8_dot;
  return options;
}

PrepackOptions packed_in(const std::string& precision) {
  PrepackOptions options;
  options.precision = precision;
  return options;
}

// The ops whose kernels a cpu kernel path or a prepacked form changes.
// packed_gemm: one-group convs and Winograd's GEMMs; int8_vnni: int8 convs, linear layers, mul,
// global average pooling and the int8 hardswish/silu/hardsigmoid and concat tables; XNNPACK's fully-connected
// operator is tiled differently from its convolution one, so linear is run again too.
const std::set<std::string, std::less<>> kOwnCpuKernelOps = {
    "conv2d", "linear", "hardswish", "silu", "hardsigmoid", "mul", "concat", "global_avg_pool", "max_pool2d"};
// Winograd takes 3x3 stride-1 conv2d only (tests/ops/cases_conv.cpp has cases large enough); our
// depthwise kernel takes conv2d's depthwise 3x3 and 5x5 ones, our stem kernel those of 1 to 4 input
// channels.
const std::set<std::string, std::less<>> kWinogradOps = {"conv2d"};
const std::set<std::string, std::less<>> kDepthwiseOps = {"conv2d"};
// mt-prepack stores conv and linear weights for cpu (packed for this CPU's kernels, or OHWI), and conv
// and linear weights for vulkan.
const std::set<std::string, std::less<>> kCpuPrepackedOps = {"conv2d", "conv_transpose2d", "linear"};
const std::set<std::string, std::less<>> kVulkanPrepackedOps = {"conv2d", "conv_transpose2d", "linear"};
// int8 conv2d and linear sum on int8 dot products where the device calls them accelerated, else in fp32;
// forced on here where it has them at all (lavapipe emulates them).
const std::set<std::string, std::less<>> kVulkanInt8DotOps = {"conv2d", "linear"};

}  // namespace

std::optional<double> Variant::tolerance(std::string_view op, const OpCase& c) const {
  if (tolerances == nullptr) return c.tolerance;
  const auto it = tolerances->find(op);
  if (it == tolerances->end()) return std::nullopt;
  return it->second;
}

const std::vector<Variant>& option_matrix() {
  static const std::vector<Variant> matrix = {
      // Threads matter to the cpu backend only; 2 splits every parallel loop unevenly.
      {.name = "cpu, 1 thread", .backend = "cpu", .options = cpu_options(1)},
      {.name = "cpu, 2 threads", .backend = "cpu", .options = cpu_options(2)},
      // Where the CPU has AVX-512F / AVX512-VNNI the defaults run our own kernels: XNNPACK's GEMMs
      // and int8 operators, which every other CPU runs, are tested here.
      {.name = "cpu, XNNPACK GEMMs and int8, 1 thread", .backend = "cpu", .options = cpu_options(1, false),
       .ops = kOwnCpuKernelOps},
      {.name = "cpu, XNNPACK GEMMs and int8, 2 threads", .backend = "cpu", .options = cpu_options(2, false),
       .ops = kOwnCpuKernelOps},
      {.name = "cpu, no Winograd, 1 thread", .backend = "cpu", .options = cpu_options(1, true, false), .ops = kWinogradOps},
      // Where the CPU has AVX-512F depthwise and stem convs run on our own kernels: XNNPACK's (and
      // the packed GEMM's gathered rows for stems), at 2 threads.
      {.name = "cpu, XNNPACK depthwise and stems, 2 threads", .backend = "cpu",
       .options = cpu_options(2, true, true, false), .ops = kDepthwiseOps},
      {.name = "cpu, prepacked, 1 thread", .backend = "cpu", .options = cpu_options(1), .prepack = PrepackOptions{},
       .ops = kCpuPrepackedOps},
      // Prepacked for a CPU without our AVX-512 kernels (Winograd's points, OHWI), planned as on one.
      {.name = "cpu, prepacked generic, 1 thread", .backend = "cpu", .options = generic_options(),
       .prepack = PrepackOptions{.cpu_target = CpuTarget::generic}, .ops = kCpuPrepackedOps},
      {.name = "vulkan", .backend = "vulkan", .options = vulkan_options("fp32")},
      {.name = "vulkan fp16", .backend = "vulkan", .options = vulkan_options("fp16"), .tolerances = &kFp16Tolerance},
      {.name = "vulkan, int8 dot products", .backend = "vulkan", .options = vulkan_options("fp32", true),
       .ops = kVulkanInt8DotOps, .int8_cases_only = true},
      // One prepacked variant on lavapipe, the slowest device: fp16 packing both reorders the weights
      // and converts them (tests/integration/vulkan_prepack.sh runs real models packed in both).
      {.name = "vulkan fp16, prepacked", .backend = "vulkan", .options = vulkan_options("fp16"),
       .prepack = packed_in("fp16"), .ops = kVulkanPrepackedOps, .tolerances = &kFp16Tolerance},
  };
  return matrix;
}

}  // namespace mt::optest
