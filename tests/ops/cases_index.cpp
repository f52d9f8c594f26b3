// Cases of the index family: trilu on both triangles with k from a constant or a run-time input
// (negative, beyond the matrix), batched and non-square; tile on every axis; gather_elements,
// scatter_elements (every reduction), gather_nd with batch_dims and scatter_nd, with negative,
// int32 and int64 indices, constant and computed, and integer data; one_hot on every axis;
// non_max_suppression with and without thresholds, batches, classes, center boxes and ties.
#include <cstdint>
#include <string>

#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_index_cases(CaseTable& t) {
  for (int64_t upper : {0, 1}) {
    const std::string side = upper != 0 ? "upper" : "lower";
    t.add("trilu", {.name = side + ", no k", .inputs = {in({4, 5})}, .attrs = {{"upper", upper}}});
    t.add("trilu", {.name = side + ", batched square, k input", .inputs = {in({2, 3, 6, 6}), typed(DType::i64, {}, -3, 4)},
                    .attrs = {{"upper", upper}}});
    t.add("trilu", {.name = side + ", wide, constant k", .inputs = {in({3, 9}), typed(DType::i64, {}, -2, 3, true)},
                    .attrs = {{"upper", upper}}});
    t.add("trilu", {.name = side + ", k beyond the matrix", .inputs = {in({5, 4}), typed(DType::i64, {}, 7, 9, true)},
                    .attrs = {{"upper", upper}}});
    t.add("trilu", {.name = side + ", int64", .inputs = {typed(DType::i64, {6, 3}, -9, 9)}, .attrs = {{"upper", upper}}});
  }

  t.add("tile", {.name = "2-D", .inputs = {in({2, 3})}, .attrs = {{"repeats", Ints{3, 2}}}});
  t.add("tile", {.name = "4-D, some axes once", .inputs = {in({1, 3, 2, 5})}, .attrs = {{"repeats", Ints{2, 1, 3, 1}}}});
  t.add("tile", {.name = "zero repeats", .inputs = {in({2, 3})}, .attrs = {{"repeats", Ints{2, 0}}}});
  t.add("tile", {.name = "int32 1-D", .inputs = {typed(DType::i32, {7}, -9, 9)}, .attrs = {{"repeats", Ints{4}}}});

  t.add("gather_elements", {.name = "axis 0", .inputs = {in({5, 4}), typed(DType::i64, {3, 4}, -5, 5)}});
  t.add("gather_elements", {.name = "axis -1, smaller indices", .inputs = {in({3, 4, 6}), typed(DType::i64, {2, 3, 9}, 0, 6)},
                            .attrs = {{"axis", int64_t{-1}}}});
  t.add("gather_elements", {.name = "int32 constant indices, axis 1", .inputs = {in({4, 7}), typed(DType::i32, {4, 2}, -7, 7, true)},
                            .attrs = {{"axis", int64_t{1}}}});
  t.add("gather_elements", {.name = "int64 data", .inputs = {typed(DType::i64, {6}, -99, 99), typed(DType::i64, {10}, 0, 6)}});

  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    const std::string r = reduction;
    t.add("scatter_elements", {.name = r + ", axis 1", .inputs = {in({3, 8}), typed(DType::i64, {3, 5}, -8, 8), in({3, 5})},
                               .attrs = {{"axis", int64_t{1}}, {"reduction", r}}});
    t.add("scatter_nd", {.name = r + ", rows of a 3-D tensor", .inputs = {in({4, 3, 5}), typed(DType::i64, {3, 1}, -4, 4), in({3, 3, 5})},
                         .attrs = {{"reduction", r}}});
  }
  t.add("scatter_elements", {.name = "axis 0, duplicates added", .inputs = {in({4, 4}), typed(DType::i32, {6, 4}, 0, 4), in({6, 4})},
                             .attrs = {{"reduction", std::string("add")}}});
  t.add("scatter_elements", {.name = "int64 data, constant indices", .inputs = {typed(DType::i64, {10}, -9, 9),
                             typed(DType::i64, {4}, 0, 10, true), typed(DType::i64, {4}, -9, 9)}});

  t.add("gather_nd", {.name = "single elements", .inputs = {in({3, 4}), typed(DType::i64, {5, 2}, -3, 3)}});
  t.add("gather_nd", {.name = "rows", .inputs = {in({4, 3, 5}), typed(DType::i64, {2, 2, 1}, 0, 4)}});
  t.add("gather_nd", {.name = "batch_dims 1", .inputs = {in({2, 3, 4}), typed(DType::i64, {2, 5, 1}, -3, 3)},
                      .attrs = {{"batch_dims", int64_t{1}}}});
  t.add("gather_nd", {.name = "int32 data and indices", .inputs = {typed(DType::i32, {4, 4}, -9, 9), typed(DType::i32, {3, 2}, 0, 4, true)}});
  // Indices from -4 to 5 against depth 4: negative ones count from the end, 4 gives no position.
  t.add("one_hot", {.name = "last axis, int64, out-of-range indices", .inputs = {typed(DType::i64, {3, 5}, -4, 5), weight({2})},
                    .attrs = {{"depth", int64_t{4}}}});
  t.add("one_hot", {.name = "axis 0, float indices", .inputs = {in({6}, -3, 3), in({2})}, .attrs = {{"depth", int64_t{3}}, {"axis", int64_t{0}}}});
  t.add("one_hot", {.name = "middle axis, int32 values", .inputs = {typed(DType::i32, {2, 3}, 0, 5), typed(DType::i32, {2}, -9, 9, true)},
                    .attrs = {{"depth", int64_t{5}}, {"axis", int64_t{-2}}}});
  t.add("scatter_nd", {.name = "single elements", .inputs = {in({4, 5}), typed(DType::i64, {3, 2}, 0, 4), in({3})}});

  // non_max_suppression: corners in any order, overlapping boxes (random corners in [0, 1]).
  const auto threshold = [](double v) { return given(DType::f32, {1}, {v}); };
  const auto max_boxes = [](int64_t n) { return Attributes{{"max_output_boxes_per_class", n}}; };
  t.add("non_max_suppression", {.name = "one class, IoU 0.5, at most 5",
                                .inputs = {in({1, 20, 4}, 0, 1), in({1, 1, 20}, 0, 1), threshold(0.5), absent()},
                                .attrs = max_boxes(5),
                                .num_outputs = 2});
  t.add("non_max_suppression", {.name = "2 batches x 3 classes, score threshold 0.4, more boxes allowed than given",
                                .inputs = {in({2, 8, 4}, 0, 1), in({2, 3, 8}, 0, 1), threshold(0.3), threshold(0.4)},
                                .attrs = max_boxes(100),
                                .num_outputs = 2});
  t.add("non_max_suppression", {.name = "center_point_box",
                                .inputs = {in({1, 16, 4}, 0.1, 1), in({1, 2, 16}, 0, 1), threshold(0.2), absent()},
                                .attrs = {{"max_output_boxes_per_class", int64_t{4}}, {"center_point_box", int64_t{1}}},
                                .num_outputs = 2});
  t.add("non_max_suppression", {.name = "equal scores: the lower index first; no thresholds",
                                .inputs = {in({1, 10, 4}, 0, 1), given(DType::f32, {1, 1, 10}, {0.5})},
                                .attrs = max_boxes(10),
                                .num_outputs = 2});
  t.add("non_max_suppression", {.name = "at most 0",
                                .inputs = {in({1, 4, 4}, 0, 1), in({1, 1, 4}, 0, 1)},
                                .attrs = max_boxes(0),
                                .num_outputs = 2});
}

}  // namespace mt::optest
