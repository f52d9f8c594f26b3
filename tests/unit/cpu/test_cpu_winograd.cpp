// Winograd F(4x4, 3x3) and F(2x2, 3x3) on the cpu backend (kernels/cpu/engines/winograd_conv.cpp): against
// the reference backend over partial tiles, pads, batches, clamps, missing bias and prepacked
// (OHWI) weights; which convolutions take which; PlanOptions::winograd turning it off. Tolerance: 1e-4
// absolute + 1e-4 relative on outputs of magnitude up to ~20 (F(4x4, 3x3) loses a few bits to its
// constants).
#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/prepack.h"
#include "kernels/cpu/engines/winograd_conv.h"
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

struct WinoCase {
  int64_t n, c, h, w, m;
  std::vector<int64_t> pads;
  bool bias = true;
  double low = -3.4028234663852886e+38, high = 3.4028234663852886e+38;
};

GraphBuilder conv3x3(const WinoCase& k) {
  GraphBuilder b;
  const auto x = b.input("x", random({k.n, k.c, k.h, k.w}, 11));
  std::vector<std::string> inputs{x, b.constant("w", random({k.m, k.c, 3, 3}, 12, -0.5f, 0.5f))};
  if (k.bias) inputs.push_back(b.constant("b", random({k.m}, 13)));
  b.output(b.op("conv2d", inputs, {{"pads", ints(k.pads)}, {"act_min", real(k.low)}, {"act_max", real(k.high)}}));
  return b;
}

// Bytes of weights the plan packed: 36 (F(4x4, 3x3)) or 16 (F(2x2, 3x3)) per 9 original weights
// when Winograd runs the conv.
size_t packed_bytes(const GraphBuilder& b, const PlanOptions& options = {}) {
  return cpu_backend().plan(b.graph, options)->memory().packed_weight_bytes;
}

}  // namespace

TEST_CASE("cpu winograd: 3x3 stride-1 convs match the reference") {
  struct Case {
    size_t tile;  // the variant the shape selects
    WinoCase conv;
  };
  const std::vector<Case> cases{
      {4, {.n = 1, .c = 32, .h = 24, .w = 24, .m = 32, .pads = {1, 1, 1, 1}}},                   // whole tiles
      {4, {.n = 1, .c = 33, .h = 25, .w = 22, .m = 40, .pads = {1, 1, 1, 1}}},                   // partial tiles, odd C
      {4, {.n = 2, .c = 32, .h = 25, .w = 23, .m = 17, .pads = {0, 0, 0, 0}, .bias = false}},    // no pads, batch 2
      {4, {.n = 1, .c = 48, .h = 26, .w = 23, .m = 24, .pads = {0, 2, 1, 1}, .low = 0, .high = 6}},  // asymmetric, relu6
      {2, {.n = 1, .c = 32, .h = 14, .w = 14, .m = 24, .pads = {1, 1, 1, 1}}},                   // whole tiles
      {2, {.n = 2, .c = 19, .h = 13, .w = 15, .m = 33, .pads = {1, 0, 1, 2}, .bias = false, .low = -1, .high = 1}},
  };
  for (const Case& c : cases) {
    const size_t tile = c.tile;
    const WinoCase& k = c.conv;  // not a structured binding: INFO captures it, which clang 14 refuses
    INFO("N=", k.n, " C=", k.c, " H=", k.h, " W=", k.w, " M=", k.m);
    const GraphBuilder b = conv3x3(k);
    const auto& y = b.graph.tensor(b.graph.outputs[0]).shape;
    REQUIRE(cpu::winograd_tile({static_cast<size_t>(y[2]), static_cast<size_t>(y[3]), static_cast<size_t>(k.c),
                                static_cast<size_t>(k.m)}) == tile);
    const size_t points = (tile + 2) * (tile + 2);
    CHECK(packed_bytes(b) >= points * static_cast<size_t>(k.m * k.c) * sizeof(float));
    // The AVX-512 packed GEMM pads each point's weights to 32-column panels.
    const size_t weights = static_cast<size_t>(k.m * k.c) * sizeof(float);
    const size_t per_point =
        cpu::packed_gemm_supported() ? cpu::packed_gemm_bytes(static_cast<size_t>(k.c), static_cast<size_t>(k.m)) : weights;
    CHECK(packed_bytes(b) < points * per_point + weights);
    check_against_reference(b, 1e-4, 1e-4);
  }
}

TEST_CASE("cpu winograd: prepacked weights, transformed for the packed GEMM or for XNNPACK's") {
  const GraphBuilder b = conv3x3({.n = 1, .c = 32, .h = 25, .w = 25, .m = 24, .pads = {1, 1, 1, 1}});
  const auto expected = run_graph(reference_backend(), b.graph, b.feeds);
  // For AVX-512: the 36 points packed as the GEMM reads them, read in place by a plan there.
  GraphBuilder avx512 = b;
  REQUIRE(cpu::prepack_graph(avx512.graph, PrepackOptions{.cpu_target = CpuTarget::avx512}).weights_packed == 1);
  REQUIRE(avx512.graph.tensor("w").layout == "cpu_winograd4_gemm");
  if (cpu::packed_gemm_supported()) {
    CHECK(packed_bytes(avx512) < size_t{24 * 32} * sizeof(float));  // the zeros of the padding, no weights
    for (int threads : {1, 2})
      check_close(run_graph(cpu_backend(), avx512.graph, avx512.feeds, threads)[0], expected[0], 1e-4, 1e-4);
  }
  // For other CPUs: the 36 points as rows, for XNNPACK's fully connected operators (or packed here).
  GraphBuilder generic = b;
  REQUIRE(cpu::prepack_graph(generic.graph, PrepackOptions{.cpu_target = CpuTarget::generic}).weights_packed == 1);
  REQUIRE(generic.graph.tensor("w").layout == "cpu_winograd4");
  PlanOptions as_generic;
  as_generic.cpu_target = CpuTarget::generic;
  for (const PlanOptions& options : {PlanOptions{}, as_generic}) {
    CHECK(packed_bytes(generic, options) >= size_t{36 * 24 * 32} * sizeof(float));
    check_close(run_graph(cpu_backend(), generic.graph, generic.feeds, options)[0], expected[0], 1e-4, 1e-4);
  }
}

TEST_CASE("cpu winograd: small, strided, dilated and grouped convs keep the direct path") {
  CHECK(cpu::winograd_tile({7, 7, 512, 512}) == 0);    // 16 tiles of 2x2
  CHECK(cpu::winograd_tile({56, 56, 3, 64}) == 0);     // too few input channels
  CHECK(cpu::winograd_tile({14, 14, 256, 256}) == 2);  // 16 tiles of 4x4, 49 of 2x2
  CHECK(cpu::winograd_tile({28, 28, 128, 128}) == 4);
  CHECK(cpu::winograd_tile({56, 56, 64, 64}) == 4);
  GraphBuilder b;
  const auto x = b.input("x", random({1, 32, 48, 48}, 1));
  b.output(b.op("conv2d", {x, b.constant("w", random({32, 32, 3, 3}, 2))},
                {{"pads", ints({1, 1, 1, 1})}, {"strides", ints({2, 2})}}));
  CHECK(packed_bytes(b) < size_t{10 * 32 * 32} * sizeof(float));
}

TEST_CASE("cpu winograd: PlanOptions::winograd = false turns it off") {
  const GraphBuilder b = conv3x3({.n = 1, .c = 32, .h = 24, .w = 24, .m = 32, .pads = {1, 1, 1, 1}});
  PlanOptions off;
  off.winograd = false;
  CHECK(packed_bytes(b, off) < size_t{10 * 32 * 32} * sizeof(float));
  check_against_reference(b, 1e-5, 1e-5, off);
  CHECK(packed_bytes(b) >= size_t{36 * 32 * 32} * sizeof(float));
}

}  // namespace mt::test
