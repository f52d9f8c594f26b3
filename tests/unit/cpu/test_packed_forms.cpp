// Zero-copy prepacked models (kernels/cpu/plan/packed_forms.h): mt-prepack --backend cpu stores each
// weight in the form its kernel reads on the target CPU; a plan reads it in place (no packed copy)
// and computes bit for bit what the plan of the unpacked model computes; a plan whose kernels differ
// (a CPU without the instructions, MT_CPU_TARGET, a switch) refuses the model before planning; the
// reader's sizes agree with the engines' packing functions; a model in memory of other alignment is
// copied rather than misread.
#include "kernels/cpu/engines/depthwise_conv.h"
#include "kernels/cpu/engines/int8_vnni.h"
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/engines/stem_conv.h"
#include "kernels/cpu/engines/winograd_conv.h"
#include "kernels/cpu/plan/kernel_paths.h"
#include "kernels/cpu/plan/packed_forms.h"
#include "kernels/cpu/plan/prepack.h"
#include "lib/core/error.h"
#include "lib/format/model_file.h"
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

// Every float32 kernel with packed weights: a 1x1 conv (GEMM), 3x3 convs on Winograd F(4x4) and
// F(2x2) and a strided one (indirect GEMM), a depthwise and a narrow conv XNNPACK packs (OHWI), a
// linear layer on the GEMM and a narrow one on XNNPACK (row-major).
GraphBuilder float_network() {
  GraphBuilder b;
  const Attributes same{{"pads", ints({1, 1, 1, 1})}};
  const auto x = b.input("x", random({1, 16, 24, 24}, 1));
  auto y = b.op("conv2d", {x, b.constant("pointwise", random({32, 16, 1, 1}, 2)), b.constant("pb", random({32}, 3))},
                {{"act_min", real(0)}});
  y = b.op("conv2d",
           {y, b.constant("winograd4", random({32, 32, 3, 3}, 4, -0.3f, 0.3f)), b.constant("wb", random({32}, 5))},
           same);
  y = b.op("conv2d", {y, b.constant("strided", random({32, 32, 3, 3}, 6, -0.3f, 0.3f))},
           {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}});
  y = b.op("conv2d", {y, b.constant("winograd2", random({32, 32, 3, 3}, 7, -0.3f, 0.3f))}, same);
  y = b.op("conv2d", {y, b.constant("depthwise", random({32, 1, 3, 3}, 8))},
           {{"pads", ints({1, 1, 1, 1})}, {"group", integer(32)}});
  y = b.op("conv2d", {y, b.constant("narrow", random({8, 32, 1, 1}, 9))});
  y = b.op("flatten", {b.op("global_avg_pool", {y})});
  y = b.op("linear", {y, b.constant("fc", random({20, 8}, 10)), b.constant("fcb", random({20}, 11))});
  b.output(b.op("linear", {y, b.constant("head", random({10, 20}, 12))}));
  return b;
}

// An int8 network on every VNNI kernel: a gathered 3x3 conv (3 input channels), a 3x3 conv, a 3x3
// depthwise conv and a linear layer, per-channel weights.
GraphBuilder int8_network() {
  GraphBuilder b;
  int seed = 20;
  auto quantized = [&](const std::string& name, Shape shape, std::vector<float> scales) {
    std::vector<int8_t> values(static_cast<size_t>(numel(shape)));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<int8_t>((i * 37 + static_cast<size_t>(seed)) % 61 - 30);
    ++seed;
    const auto w = b.constant(name, HostTensor::of(DType::i8, shape, values));
    const size_t channels = scales.size();
    b.graph.tensor(w).quant = QuantParams{
        .scales = std::move(scales), .zero_points = std::vector<int32_t>(channels, 0), .axis = channels > 1 ? 0 : -1};
    return w;
  };
  auto bias = [&](const std::string& name, size_t n) {
    std::vector<int32_t> values(n);
    for (size_t i = 0; i < n; ++i) values[i] = static_cast<int32_t>(i * 131 % 997) - 500;
    return b.constant(name, i32({static_cast<int64_t>(n)}, values));
  };
  auto activation = [&](const std::string& tensor, float scale, int32_t zero) {
    b.graph.tensor(tensor).quant = QuantParams{.scales = {scale}, .zero_points = {zero}};
    return tensor;
  };
  std::vector<int8_t> input(3 * 12 * 12);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<int8_t>(i * 11 % 97 - 48);
  const auto x = activation(b.input("x", HostTensor::of(DType::i8, {1, 3, 12, 12}, input)), 0.05f, 3);
  const Attributes same{{"pads", ints({1, 1, 1, 1})}};
  auto y = activation(
      b.op("conv2d", {x, quantized("stem", {16, 3, 3, 3}, std::vector<float>(16, 0.01f)), bias("sb", 16)}, same), 0.08f,
      -4);
  y = activation(
      b.op("conv2d", {y, quantized("conv", {24, 16, 3, 3}, std::vector<float>(24, 0.004f)), bias("cb", 24)}, same),
      0.1f, 2);
  y = activation(b.op("conv2d", {y, quantized("dw", {24, 1, 3, 3}, std::vector<float>(24, 0.01f)), bias("db", 24)},
                      {{"pads", ints({1, 1, 1, 1})}, {"group", integer(24)}}),
                 0.1f, -1);
  y = activation(b.op("flatten", {y}), 0.1f, -1);
  b.output(activation(
      b.op("linear", {y, quantized("fc", {10, 24 * 12 * 12}, std::vector<float>(10, 0.001f)), bias("fb", 10)}), 0.2f,
      0));
  return b;
}

std::map<std::string, std::string> layouts(const Graph& graph) {
  std::map<std::string, std::string> result;
  for (const auto& [name, info] : graph.tensors)
    if (info.is_constant()) result[name] = info.layout;
  return result;
}

size_t packed_bytes(const Graph& graph, const PlanOptions& options = {}) {
  return cpu_backend().plan(graph, options)->memory().packed_weight_bytes;
}

void check_equal(const std::vector<HostTensor>& actual, const std::vector<HostTensor>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) CHECK(actual[i].bytes == expected[i].bytes);
}

// The error planning `graph` with `options` refuses it with.
std::string refusal(const Graph& graph, const PlanOptions& options) {
  try {
    cpu_backend().plan(graph, options);
  } catch (const Error& error) {
    CHECK(error.code() == ExitCode::unsupported);
    return error.what();
  }
  FAIL("the plan was made");
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("cpu packed forms: the reader's sizes of the cpu layouts are the engines' packed sizes") {
  for (size_t n : {1, 16, 31, 32, 33, 100})
    for (size_t k : {1, 3, 27, 64}) {
      INFO("n=", n, " k=", k);
      const auto s = [](size_t v) { return static_cast<int64_t>(v); };
      CHECK(stored_byte_size(DType::f32, {s(n), s(k)}, "cpu_gemm") == cpu::packed_gemm_bytes(k, n));
      CHECK(stored_byte_size(DType::f32, {s(n), s(k), 3, 3}, "cpu_gemm") == cpu::packed_gemm_bytes(9 * k, n));
      CHECK(stored_byte_size(DType::f32, {s(n), s(k), 3, 3}, "cpu_winograd4_gemm") ==
            36 * cpu::packed_gemm_bytes(k, n));
      CHECK(stored_byte_size(DType::f32, {s(n), s(k), 3, 3}, "cpu_winograd2_gemm") ==
            16 * cpu::packed_gemm_bytes(k, n));
      CHECK(stored_byte_size(DType::f32, {s(n), s(k), 3, 3}, "cpu_winograd4") == 36 * n * k * 4);
      CHECK(stored_byte_size(DType::i8, {s(n), s(k)}, "cpu_vnni_gemm") == cpu::int8_gemm_bytes(1, k, n));
      CHECK(stored_byte_size(DType::i8, {s(n), s(k), 5, 5}, "cpu_vnni_gemm") == cpu::int8_gemm_bytes(25, k, n));
      CHECK(stored_byte_size(DType::i8, {s(n), s(k), 3, 3}, "cpu_vnni_gemm_gathered") ==
            cpu::int8_gemm_bytes(1, 9 * k, n));
      for (size_t kernel : {3, 5}) {
        CHECK(stored_byte_size(DType::i8, {s(n), 1, s(kernel), s(kernel)}, "cpu_vnni_depthwise") ==
              cpu::int8_depthwise_bytes(kernel, n));
        CHECK(stored_byte_size(DType::f32, {s(n), 1, s(kernel), s(kernel)}, "cpu_depthwise") ==
              cpu::depthwise_bytes(kernel, kernel, n));
      }
      for (size_t channels : {1, 3, 4})
        CHECK(stored_byte_size(DType::f32, {s(n), s(channels), 7, 5}, "cpu_stem") ==
              cpu::stem_bytes(channels, n, 7, 5));
    }
}

TEST_CASE("cpu packed forms: --cpu avx512 stores every weight as its kernel reads it; plans read them in place") {
  const GraphBuilder plain = float_network();
  GraphBuilder packed = plain;
  const cpu::PrepackStats stats = cpu::prepack_graph(packed.graph, PrepackOptions{.cpu_target = CpuTarget::avx512});
  CHECK(stats.weights_packed == 6);
  CHECK(stats.weights_reordered == 1);
  const std::map<std::string, std::string> expected_layouts{{"pointwise", "cpu_gemm"},
                                                            {"pb", ""},
                                                            {"winograd4", "cpu_winograd4_gemm"},
                                                            {"wb", ""},
                                                            {"strided", "cpu_gemm"},
                                                            {"winograd2", "cpu_winograd2_gemm"},
                                                            {"depthwise", "cpu_depthwise"},
                                                            {"narrow", "ohwi"},
                                                            {"fc", "cpu_gemm"},
                                                            {"fcb", ""},
                                                            {"head", ""}};
  CHECK(layouts(packed.graph) == expected_layouts);
  CHECK(packed.graph.metadata["prepack"]["target"] == "avx512");
  CHECK(packed.graph.metadata["prepack"]["weights_packed"] == 6);

  if (cpu::native_target() != CpuTarget::avx512) {
    CHECK(contains(refusal(packed.graph, {}), "which this CPU lacks"));
    return;
  }
  // The packed copies of the unpacked model, none (the narrow conv's XNNPACK packing
  // and a few zeros aside) for the prepacked one; the same results bit for bit, at 1 and 2 threads.
  const size_t weights = 32 * 16 + 3 * 32 * 32 * 9 + 20 * 8;
  CHECK(packed_bytes(plain.graph) > weights * sizeof(float));
  CHECK(packed_bytes(packed.graph) < 4096);
  for (int threads : {1, 2}) {
    INFO("threads: ", threads);
    const auto expected = run_graph(cpu_backend(), plain.graph, plain.feeds, threads);
    check_equal(run_graph(cpu_backend(), packed.graph, packed.feeds, threads), expected);
    check_close(run_graph(reference_backend(), plain.graph, plain.feeds)[0], expected[0], 1e-4, 1e-4);
  }
  // Read from a model file's memory map, and from a buffer of another alignment (copied, not misread).
  const std::vector<std::byte> file = encode_model(packed.graph);
  for (size_t shift : {0, 4}) {
    INFO("buffer offset ", shift);
    auto buffer = std::make_shared<std::vector<std::byte>>(file.size() + 64);
    auto* start = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(buffer->data()) + 63) / 64 * 64) + shift;
    buffer->resize(static_cast<size_t>(start - buffer->data()) + file.size());
    std::copy(file.begin(), file.end(), start);
    const Graph read = decode_model(InputBytes{.owner = buffer, .data = start, .size = file.size(), .source = "m.mt"});
    CHECK(encode_model(read) == file);  // the packed layouts round trip byte for byte
    check_equal(run_graph(cpu_backend(), read, packed.feeds), run_graph(cpu_backend(), plain.graph, plain.feeds));
  }
}

TEST_CASE("cpu packed forms: --cpu generic stores Winograd's points and XNNPACK's order; any CPU plans it") {
  const GraphBuilder plain = float_network();
  GraphBuilder packed = plain;
  const cpu::PrepackStats stats = cpu::prepack_graph(packed.graph, PrepackOptions{.cpu_target = CpuTarget::generic});
  CHECK(stats.weights_packed == 2);
  CHECK(stats.weights_reordered == 4);
  const auto stored = layouts(packed.graph);
  CHECK(stored.at("winograd4") == "cpu_winograd4");
  CHECK(stored.at("winograd2") == "cpu_winograd2");
  CHECK(stored.at("pointwise") == "ohwi");
  CHECK(stored.at("fc").empty());
  CHECK(packed.graph.metadata["backend"]["target"] == "generic");
  // Planned here (the packed GEMM packs from them where the CPU has it) and as on a generic CPU: the
  // results of the unpacked model planned alike, bit for bit.
  PlanOptions generic;
  generic.cpu_target = CpuTarget::generic;
  for (const PlanOptions& options : {PlanOptions{}, generic})
    check_equal(run_graph(cpu_backend(), packed.graph, packed.feeds, options),
                run_graph(cpu_backend(), plain.graph, plain.feeds, options));
}

TEST_CASE("cpu packed forms: int8 weights in the VNNI layouts, folded biases and multipliers included") {
  const GraphBuilder plain = int8_network();
  GraphBuilder packed = plain;
  const cpu::PrepackStats stats = cpu::prepack_graph(packed.graph, PrepackOptions{.cpu_target = CpuTarget::avx512});
  CHECK(stats.weights_packed == 4);
  const auto stored = layouts(packed.graph);
  CHECK(stored.at("stem") == "cpu_vnni_gemm_gathered");
  CHECK(stored.at("conv") == "cpu_vnni_gemm");
  CHECK(stored.at("dw") == "cpu_vnni_depthwise");
  CHECK(stored.at("fc") == "cpu_vnni_gemm");
  CHECK(stored.at("cb").empty());  // the bias stays, folded into the packed block too
  if (!cpu::int8_vnni_supported()) {
    CHECK(contains(refusal(packed.graph, {}), "needs AVX512-VNNI, -BW, -VL and -VBMI, which this CPU lacks"));
    return;
  }
  CHECK(packed_bytes(packed.graph) < 1024);
  // The VNNI kernels equal the reference exactly.
  const auto expected = run_graph(reference_backend(), plain.graph, plain.feeds);
  for (int threads : {1, 2}) check_equal(run_graph(cpu_backend(), packed.graph, packed.feeds, threads), expected);
}

TEST_CASE("cpu packed forms: a plan whose kernels differ refuses the model, naming the weight and why") {
  GraphBuilder packed = float_network();
  cpu::prepack_graph(packed.graph, PrepackOptions{.cpu_target = CpuTarget::avx512});
  PlanOptions generic;
  generic.cpu_target = CpuTarget::generic;
  const std::string capped = refusal(packed.graph, generic);
  CHECK(
      capped ==
      "tensor 'pointwise' is stored for the packed GEMM (layout 'cpu_gemm'), but the packed GEMM needs AVX-512F, which "
      "the target generic (MT_CPU_TARGET) excludes (and 5 more weights): plan the model from before mt-prepack, or "
      "prepack it for this CPU (mt-prepack --cpu)");
  if (cpu::packed_gemm_supported()) {
    PlanOptions off;
    off.packed_gemm = false;
    CHECK(contains(refusal(packed.graph, off), "the packed GEMM is turned off (MT_CPU_AVX512_GEMM=0)"));
    PlanOptions no_winograd;
    no_winograd.winograd = false;
    CHECK(contains(refusal(packed.graph, no_winograd),
                   "tensor 'winograd4' is stored for Winograd F(4x4, 3x3) on the packed GEMM (layout "
                   "'cpu_winograd4_gemm'), but Winograd is turned off (MT_CPU_WINOGRAD=0) (and 1 more weights)"));
  }
  // int8: the VNNI layouts under a cap or with the switch off.
  GraphBuilder int8 = int8_network();
  cpu::prepack_graph(int8.graph, PrepackOptions{.cpu_target = CpuTarget::avx512});
  CHECK(contains(refusal(int8.graph, generic),
                 "the int8 VNNI GEMM needs AVX512-VNNI, -BW, -VL and -VBMI, which the target generic"));
  if (cpu::int8_vnni_supported()) {
    PlanOptions off;
    off.int8_vnni = false;
    CHECK(contains(refusal(int8.graph, off), "is turned off (MT_CPU_INT8_VNNI=0)"));
  }
}

TEST_CASE("cpu packed forms: a constant graph output in a layout is refused, not copied as row-major") {
  // Stored sizes of some layouts are smaller than the row-major ones (fp16): the copy would read past them.
  GraphBuilder b;
  b.output(b.op("relu", {b.input("x", random({4}, 1))}));
  b.output(b.constant("c", random({3}, 2)));
  b.graph.tensor("c").data = ConstData::allocate(8);
  b.graph.tensor("c").layout = "vk_channels.f16";
  CHECK(refusal(b.graph, {}) ==
        "graph output 'c' is a constant stored in layout 'vk_channels.f16'; cpu returns "
        "constants row-major");
}

TEST_CASE("cpu packed forms: check_node accepts a cpu layout only where the node's kernel reads it") {
  GraphBuilder packed = float_network();
  cpu::prepack_graph(packed.graph, PrepackOptions{.cpu_target = CpuTarget::avx512});
  for (const Node& node : packed.graph.nodes) CHECK(!cpu_backend().check_node(packed.graph, node).has_value());
  // The GEMM layout on the narrow conv, which XNNPACK runs on every CPU; on a bias; a Winograd layout
  // on the strided conv.
  auto node_reading = [&](const std::string& tensor) -> const Node& {
    for (const Node& node : packed.graph.nodes)
      for (const auto& input : node.inputs)
        if (input == tensor) return node;
    FAIL("no node reads " << tensor);
    return packed.graph.nodes[0];
  };
  for (const auto& [name, layout_tag] :
       std::vector<std::pair<std::string, std::string>>{{"narrow", "cpu_gemm"},
                                                        {"pb", "cpu_gemm"},
                                                        {"strided", "cpu_winograd4_gemm"},
                                                        {"winograd4", "cpu_winograd2"},
                                                        {"head", "cpu_gemm"},
                                                        {"depthwise", "cpu_vnni_depthwise"}}) {
    const std::string tensor = name, layout = layout_tag;  // INFO captures them: not structured bindings (clang 14)
    INFO(tensor, " in ", layout);
    GraphBuilder edited = packed;
    edited.graph.tensor(tensor).layout = layout;
    CHECK(cpu_backend().check_node(edited.graph, node_reading(tensor)) ==
          fmt::format("tensor '{}' has layout '{}', which cpu does not read here", tensor, layout));
  }
}

TEST_CASE("cpu packed forms: the target names and this CPU's") {
  for (CpuTarget target : {CpuTarget::generic, CpuTarget::avx2, CpuTarget::avx512})
    CHECK(parse_cpu_target(cpu_target_name(target)) == target);
  CHECK_FALSE(parse_cpu_target("avx512f"));
  CHECK(cpu::target_paths(CpuTarget::avx512).packed_gemm);
  CHECK_FALSE(cpu::target_paths(CpuTarget::avx2).int8_vnni);
  CHECK_FALSE(cpu::target_paths(CpuTarget::generic).avx2_fma);
  const CpuTarget native = cpu::native_target();
  CHECK((native == CpuTarget::avx512) == (cpu::packed_gemm_supported() && cpu::int8_vnni_supported()));
  PlanOptions capped;
  capped.cpu_target = CpuTarget::generic;
  const cpu::KernelPaths paths = cpu::plan_paths(capped);
  CHECK_FALSE(paths.packed_gemm);
  CHECK_FALSE(paths.int8_vnni);
  CHECK_FALSE(paths.avx2_fma);
}

}  // namespace mt::test
