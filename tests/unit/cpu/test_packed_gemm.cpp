// The AVX-512 packed GEMM (kernels/cpu/engines/packed_gemm.h) against a double-precision loop: row counts
// around its 8-row blocks, column counts around its 32-column panels (masked stores), row strides
// wider than the matrices (nothing outside them is read or written), bias or none, clamps, the
// other output stages (hardswish, silu, a residual add with its clamp), one and two threads;
// PlanOptions::packed_gemm turning it off. Tolerance: 1e-5 of the sum of |a b| terms (fp32
// accumulation over k terms), plus 2e-6 of the value for silu. On a CPU without AVX-512F there is
// nothing to test.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/engines/packed_gemm.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/cpu/plan/thread_pool.h"
#include "tests/unit/cpu/epilogue_reference.h"
#include "lib/core/error.h"
#include "tests/unit/cpu/cpu_test_util.h"

namespace mt::test {
namespace {

void check_gemm(size_t m, size_t n, size_t k, bool with_bias, cpu::Epilogue e, bool residual,
                mt::cpu::ThreadPool* pool) {
  const size_t lda = k + 3, ldc = n + 5;
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 7 + k));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(m * lda), w(n * k), bias(n), r(m * ldc);
  for (auto* values : {&a, &w, &bias, &r})
    for (float& v : *values) v = dist(rng);
  const float sentinel = 12345.0f;
  std::vector<float> c(m * ldc, sentinel);
  const cpu::OwnedBlock memory(cpu::packed_gemm_bytes(k, n));  // aligned as the plan's memory is
  const cpu::PackedWeights packed =
      cpu::pack_gemm_weights(memory.data(), w.data(), k, with_bias ? bias.data() : nullptr, k, n);
  if (residual) e.residual = r.data();
  cpu::packed_gemm(packed, m, a.data(), lda, c.data(), ldc, e, pool);
  const std::string shape = "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= n) {
        if (got != sentinel) FAIL_CHECK(shape << ": wrote past column n at " << i << "," << j);
        continue;
      }
      double sum = with_bias ? bias[j] : 0.0, magnitude = std::fabs(sum);
      for (size_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a[i * lda + p]) * w[j * k + p];
        magnitude += std::fabs(static_cast<double>(a[i * lda + p]) * w[j * k + p]);
      }
      const double want = reference_epilogue(sum, e, r[i * ldc + j]);
      if (std::fabs(got - want) > 1e-5 * (magnitude + 1) + 2e-6 * std::fabs(want))
        FAIL_CHECK(shape << " at " << i << "," << j << ": got " << got << ", want " << want);
    }
}

}  // namespace

TEST_CASE("cpu packed gemm: matches a double-precision loop") {
  if (!cpu::packed_gemm_supported()) {
    MESSAGE("skipped: this CPU has no AVX-512F, so the cpu backend uses XNNPACK's GEMMs instead");
    return;
  }
  const float inf = std::numeric_limits<float>::infinity();
  mt::cpu::ThreadPool two_threads(2);
  mt::cpu::ThreadPool* two = &two_threads;
  for (size_t m : {1, 7, 8, 9, 23})
    for (size_t n : {1, 16, 17, 32, 33, 70})
      for (size_t k : {1, 5, 64}) {
        check_gemm(m, n, k, true, cpu::Epilogue{.low = -inf, .high = inf}, false, nullptr);
        check_gemm(m, n, k, false, cpu::Epilogue{.low = 0.0f, .high = 0.5f}, false, two);
        check_gemm(m, n, k, true, cpu::Epilogue{.activation = cpu::Activation::hardswish}, false, nullptr);
        check_gemm(m, n, k, true, cpu::Epilogue{.activation = cpu::Activation::silu}, true, two);
        check_gemm(m, n, k, false, cpu::Epilogue{.low = -0.5f, .residual_low = 0.0f, .residual_high = 1.0f}, true,
                   nullptr);
      }
}

TEST_CASE("cpu packed gemm: PlanOptions::packed_gemm = false plans XNNPACK's convolution instead") {
  // A 1x1 conv from 32 to 40 channels: the packed GEMM's weights are 2 panels of 32 columns.
  GraphBuilder b;
  const auto x = b.input("x", random({1, 32, 6, 5}, 1));
  b.output(b.op("conv2d", {x, b.constant("w", random({40, 32, 1, 1}, 2)), b.constant("b", random({40}, 3))}));
  PlanOptions off;
  off.packed_gemm = false;
  const auto packed_bytes = [&](const PlanOptions& options) {
    return cpu_backend().plan(b.graph, options)->memory().packed_weight_bytes;
  };
  if (cpu::packed_gemm_supported()) CHECK(packed_bytes(PlanOptions{}) == cpu::packed_gemm_bytes(32, 40));
  CHECK(packed_bytes(off) != cpu::packed_gemm_bytes(32, 40));
  check_against_reference(b, 1e-5, 1e-5, off);
  check_against_reference(b, 1e-5, 1e-5);
}

}  // namespace mt::test
