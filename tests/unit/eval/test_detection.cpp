// non_max_suppression and max_pool2d_indices against ONNX's own examples (onnx/backend/test/case/node:
// nonmaxsuppression.py, maxpool.py), in the fast unit suite: the conformance stage runs them too.
#include <doctest/doctest.h>

#include "tests/unit/eval/kernel_test_util.h"

namespace mt::test {
namespace {

using Ints = std::vector<int64_t>;

// ONNX's six boxes (two clusters of three, one far away): (y1, x1, y2, x2), or centre and size.
HostTensor onnx_boxes(bool center_point_box) {
  if (center_point_box)
    return f32({1, 6, 4}, {0.5f, 0.5f,  1, 1, 0.5f, 0.6f,  1, 1, 0.5f, 0.4f,   1, 1,
                           0.5f, 10.5f, 1, 1, 0.5f, 10.6f, 1, 1, 0.5f, 100.5f, 1, 1});
  return f32({1, 6, 4},
             {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
}

std::vector<HostTensor> nms(const HostTensor& boxes, int64_t max, std::optional<HostTensor> score_threshold,
                            int64_t center_point_box = 0) {
  const HostTensor scores = f32({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  return run_node("non_max_suppression", {boxes, scores, f32({1}, {0.5f}), score_threshold},
                  {{"max_output_boxes_per_class", max}, {"center_point_box", center_point_box}}, 2);
}

TEST_CASE("non_max_suppression: ONNX's examples, the valid rows first and their count") {
  // suppress_by_IOU: the best of each cluster and the far box.
  auto out = nms(onnx_boxes(false), 3, std::nullopt);
  CHECK(out[0].shape == Shape{3, 3});
  CHECK(out[0].values<int64_t>() == Ints{0, 0, 3, 0, 0, 0, 0, 0, 5});
  CHECK(out[1].values<int64_t>() == Ints{3});
  // center_point_box: the same boxes as centres and sizes.
  CHECK(nms(onnx_boxes(true), 3, std::nullopt, 1)[0].values<int64_t>() == Ints{0, 0, 3, 0, 0, 0, 0, 0, 5});
  // suppress_by_IOU_and_scores (0.4): the far box (0.3) is dropped; planned for 6 rows, 2 valid.
  out = nms(onnx_boxes(false), 6, f32({1}, {0.4f}));
  CHECK(out[0].shape == Shape{6, 3});
  CHECK(out[1].values<int64_t>() == Ints{2});
  CHECK(out[0].values<int64_t>() == Ints{0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  // limit_output_size: at most 2.
  CHECK(nms(onnx_boxes(false), 2, std::nullopt)[0].values<int64_t>() == Ints{0, 0, 3, 0, 0, 0});
}

TEST_CASE("max_pool2d_indices: ONNX's with_argmax example (precomputed pads)") {
  std::vector<float> x(25);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1);
  const HostTensor y =
      run_op("max_pool2d_indices", {f32({1, 1, 5, 5}, x)}, {{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}});
  CHECK(y.shape == Shape{1, 1, 5, 5});
  CHECK(y.values<int64_t>() ==
        Ints{12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24});
  // precomputed_strides, storage_order 1: planes indexed column-major (w * H + h).
  const HostTensor z = run_op("max_pool2d_indices", {f32({1, 1, 5, 5}, x)},
                              {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"storage_order", int64_t{1}}});
  CHECK(z.values<int64_t>() == Ints{6, 16, 8, 18});
}

}  // namespace
}  // namespace mt::test
