// The pointwise + depthwise (+ projection) step (kernels/cpu/engines/pointwise_depthwise.h) against
// its convs run apart (packed_gemm over every pixel, then depthwise_conv, then packed_gemm again with
// a residual add): equal to the bit, since each row of each is computed by the same kernels. Kernels 3x3 and 5x5, strides 1 and 2, padding, widths and
// channel counts off the kernels' blocks, one to three images (the ring crossing an image), 1 to 3
// parts on a pool of 3 threads (boundary rows computed by two parts), each output stage on either
// conv; nothing outside the output is written. Also when the fusion pays. On a CPU without
// AVX-512F there is nothing to test.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "kernels/cpu/engines/pointwise_depthwise.h"
#include "kernels/cpu/plan/plan_builder.h"
#include "kernels/cpu/plan/thread_pool.h"

namespace mt::test {
namespace {

struct Case {
  size_t n, in_channels, channels, h, w, kernel, stride;
  int64_t pad;
  cpu::Activation pointwise, depthwise;
  size_t project = 0;  // output channels of a projection, 0: none
};

void check(const Case& k, size_t parts, cpu::ThreadPool* pool) {
  const size_t c = k.channels, span = k.kernel;
  const size_t out_h = (k.h + 2 * static_cast<size_t>(k.pad) - span) / k.stride + 1;
  const size_t out_w = (k.w + 2 * static_cast<size_t>(k.pad) - span) / k.stride + 1;
  std::mt19937 rng(static_cast<unsigned>(c * 31 + k.h * 7 + k.kernel + k.stride));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const size_t out_channels = k.project != 0 ? k.project : c;
  std::vector<float> x(k.n * k.h * k.w * k.in_channels), pw(c * k.in_channels), pb(c), dw(c * span * span), db(c);
  std::vector<float> qw(k.project * c), qb(k.project), r(k.n * out_h * out_w * out_channels);
  for (auto* v : {&x, &pw, &pb, &dw, &db, &qw, &qb, &r})
    for (float& f : *v) f = dist(rng);
  const cpu::OwnedBlock pw_memory(cpu::packed_gemm_bytes(k.in_channels, c));
  const cpu::OwnedBlock dw_memory(cpu::depthwise_bytes(span, span, c));
  const cpu::OwnedBlock project_memory(cpu::packed_gemm_bytes(c, std::max<size_t>(1, k.project)));
  cpu::PointwiseDepthwise fused{
      .pointwise = cpu::pack_gemm_weights(pw_memory.data(), pw.data(), k.in_channels, pb.data(), k.in_channels, c),
      .pointwise_epilogue = {.low = -6.0f, .high = 6.0f, .activation = k.pointwise},
      .depthwise = cpu::pack_depthwise_weights(dw_memory.data(), dw.data(), db.data(), span, span, c),
      .depthwise_epilogue = {.low = -4.0f, .high = 5.0f, .activation = k.depthwise}};
  if (k.project != 0) {
    fused.project = cpu::pack_gemm_weights(project_memory.data(), qw.data(), c, qb.data(), c, k.project);
    fused.project_epilogue = {.low = -3.0f, .high = 3.0f, .residual_low = -2.0f, .residual_high = 4.0f};
  }
  const cpu::PackedConvShape shape{.n = k.n,
                                   .h = k.h,
                                   .w = k.w,
                                   .channels = c,
                                   .out_h = out_h,
                                   .out_w = out_w,
                                   .kernel_h = span,
                                   .kernel_w = span,
                                   .stride_h = k.stride,
                                   .stride_w = k.stride,
                                   .dilation_h = 1,
                                   .dilation_w = 1,
                                   .pad_top = k.pad,
                                   .pad_left = k.pad};
  // Apart: the whole expanded tensor, then the depthwise conv.
  std::vector<float> mid(k.n * k.h * k.w * c);
  cpu::packed_gemm(fused.pointwise, k.n * k.h * k.w, x.data(), k.in_channels, mid.data(), c, fused.pointwise_epilogue,
                   nullptr);
  const float sentinel = 12345.0f;
  std::vector<float> expected(k.n * out_h * out_w * out_channels + 16, sentinel);
  std::vector<float> depthwise(k.n * out_h * out_w * c);
  cpu::depthwise_conv(fused.depthwise, shape, mid.data(), k.project != 0 ? depthwise.data() : expected.data(),
                      fused.depthwise_epilogue, nullptr);
  cpu::Epilogue with_residual = fused.project_epilogue;
  with_residual.residual = r.data();
  if (k.project != 0)
    cpu::packed_gemm(fused.project, k.n * out_h * out_w, depthwise.data(), c, expected.data(), k.project, with_residual,
                     nullptr);
  // As one step.
  std::vector<float> actual(expected.size(), sentinel);
  const cpu::OwnedBlock scratch(cpu::pointwise_depthwise_scratch_bytes(shape, parts, k.project != 0));
  cpu::pointwise_depthwise(fused, shape, x.data(), scratch.data(), parts, actual.data(),
                           k.project != 0 ? r.data() : nullptr, pool);
  size_t differ = 0;
  for (size_t i = 0; i < expected.size(); ++i) differ += actual[i] != expected[i] ? 1 : 0;
  CHECK_MESSAGE(differ == 0, k.n << "x" << k.in_channels << "->" << c << "x" << k.h << "x" << k.w << " kernel "
                                 << k.kernel << " stride " << k.stride << ", " << parts << " parts: " << differ
                                 << " of " << expected.size() << " differ");
}

}  // namespace

TEST_CASE("cpu pointwise + depthwise step: equal to the two convs apart, at every split") {
  if (!cpu::depthwise_supported() || !cpu::packed_gemm_supported()) {
    MESSAGE("skipped: this CPU has no AVX-512F");
    return;
  }
  using cpu::Activation;
  const std::vector<Case> cases = {
      {1, 16, 96, 23, 19, 3, 2, 1, Activation::silu, Activation::silu},          // EfficientNet's first block
      {2, 8, 40, 17, 21, 3, 1, 1, Activation::none, Activation::hardswish},      // 2 images, stride 1
      {3, 12, 24, 11, 9, 5, 2, 2, Activation::hardswish, Activation::none},      // 5x5 s2, 3 images
      {1, 24, 33, 14, 30, 5, 1, 2, Activation::silu, Activation::hardswish},     // odd channels
      {2, 5, 17, 9, 8, 3, 2, 0, Activation::none, Activation::none},             // no padding
      {2, 8, 48, 13, 11, 3, 1, 1, Activation::none, Activation::none, 24},       // + projection and residual
      {1, 16, 40, 15, 17, 5, 2, 2, Activation::hardswish, Activation::silu, 9},  // 5x5 s2, projection of 9
  };
  cpu::ThreadPool pool(3);
  for (const Case& k : cases)
    for (size_t parts : {1, 2, 3}) check(k, parts, &pool);
  // Pays: EfficientNet's 96 x 112 x 112 expansion at 1 and 2 threads; not a small layer, nor where
  // the rows two parts share would be more than an eighth of a part's, nor a dilated conv.
  cpu::PackedConvShape large{.n = 1,
                             .h = 112,
                             .w = 112,
                             .channels = 96,
                             .out_h = 56,
                             .out_w = 56,
                             .kernel_h = 3,
                             .kernel_w = 3,
                             .stride_h = 2,
                             .stride_w = 2,
                             .dilation_h = 1,
                             .dilation_w = 1,
                             .pad_top = 1,
                             .pad_left = 1};
  CHECK(cpu::pointwise_depthwise_pays(large, 1));
  CHECK(cpu::pointwise_depthwise_pays(large, 2));
  cpu::PackedConvShape small = large;
  small.h = small.w = 28, small.out_h = small.out_w = 14;
  CHECK_FALSE(cpu::pointwise_depthwise_pays(small, 1));
  cpu::PackedConvShape shallow = large;  // 8 output rows per part at 8 threads: 16 rows own, 1 shared
  CHECK(cpu::pointwise_depthwise_pays(shallow, 7));
  shallow.kernel_h = shallow.kernel_w = 5;  // 3 shared rows of 16
  CHECK_FALSE(cpu::pointwise_depthwise_pays(shallow, 7));
  cpu::PackedConvShape dilated = large;
  dilated.dilation_h = dilated.dilation_w = 2;
  CHECK_FALSE(cpu::pointwise_depthwise_pays(dilated, 1));
}

}  // namespace mt::test
