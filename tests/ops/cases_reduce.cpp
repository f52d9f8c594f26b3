// Cases of the reduce family: all axes, single axes (first, middle, last, negative), several
// axes, keepdims on and off; softmax, log_softmax and hardmax along every axis of a 4-D tensor;
// argmax/argmin with keepdims and select_last_index; cumsum
// exclusive and reversed, float and integer; top_k largest and smallest along any axis.
#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_reduce_cases(CaseTable& t) {
  struct AxesCase {
    std::string name;
    Ints axes;
    int64_t keepdims;
  };
  const std::vector<AxesCase> axes_cases = {
      {"all axes", {}, 1},         {"all axes, no keepdims", {}, 0}, {"axis 0", {0}, 1},
      {"axis 1 (channels)", {1}, 0}, {"axis -1", {-1}, 1},           {"spatial axes 2,3", {2, 3}, 1},
      {"axes 1,3 no keepdims", {1, 3}, 0}, {"axes -3,-1", {-3, -1}, 1},
  };
  for (const char* op : {"reduce_mean", "reduce_sum", "reduce_max", "reduce_min", "reduce_l1", "reduce_l2",
                         "reduce_sum_square", "reduce_log_sum_exp"}) {
    for (const auto& c : axes_cases)
      t.add(op, {.name = c.name, .inputs = {in({2, 5, 3, 7})}, .attrs = {{"axes", c.axes}, {"keepdims", c.keepdims}}});
    t.add(op, {.name = "rank 2 rows", .inputs = {in({9, 33})}, .attrs = {{"axes", Ints{1}}}});
    t.add(op, {.name = "rank 1", .inputs = {in({100})}, .attrs = {{"axes", Ints{0}}, {"keepdims", int64_t{0}}}});
  }
  // log of a sum: positive inputs.
  for (const auto& c : axes_cases)
    t.add("reduce_log_sum", {.name = c.name, .inputs = {in({2, 5, 3, 7}, 0.1, 2)}, .attrs = {{"axes", c.axes}, {"keepdims", c.keepdims}}});
  t.add("reduce_log_sum", {.name = "rank 2 rows", .inputs = {in({9, 33}, 0.1, 2)}, .attrs = {{"axes", Ints{1}}}});
  // product: values near 1, so that 210-element products stay in float32's range.
  for (const auto& c : axes_cases)
    t.add("reduce_prod", {.name = c.name,
                          .inputs = {in({2, 5, 3, 7}, 0.7, 1.4)},
                          .attrs = {{"axes", c.axes}, {"keepdims", c.keepdims}}});
  t.add("reduce_prod",
        {.name = "rank 2 rows, signs", .inputs = {in({9, 33}, -1.5, 1.5)}, .attrs = {{"axes", Ints{1}}}});
  // exp(90) overflows float32: the maximum is taken out first.
  t.add("reduce_log_sum_exp", {.name = "large values", .inputs = {in({3, 17}, 80, 100)}, .attrs = {{"axes", Ints{1}}}});
  t.add("reduce_log_sum_exp", {.name = "large values, kept inner axis", .inputs = {in({17, 3}, 80, 100)}, .attrs = {{"axes", Ints{0}}}});

  for (const char* op : {"argmax", "argmin"}) {
    for (int64_t axis : {0, 1, 2, 3, -1})
      t.add(op, {.name = "2x5x3x7 axis " + std::to_string(axis), .inputs = {in({2, 5, 3, 7})}, .attrs = {{"axis", axis}}});
    t.add(op, {.name = "no keepdims", .inputs = {in({4, 9})}, .attrs = {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}});
    // Ties (first or last index) are in the reference kernels' unit tests: random floats have none.
    for (int64_t last : {0, 1})
      t.add(op, {.name = "select_last_index " + std::to_string(last), .inputs = {in({6, 8, 5})},
                 .attrs = {{"axis", int64_t{1}}, {"select_last_index", last}}});
    t.add(op, {.name = "rank 1", .inputs = {in({50})}, .attrs = {{"keepdims", int64_t{0}}}});
  }

  for (const char* op : {"softmax", "log_softmax", "hardmax"}) {
    for (int64_t axis : {-1, 0, 1, 2, 3})
      t.add(op, {.name = "2x5x3x7 axis " + std::to_string(axis), .inputs = {in({2, 5, 3, 7}, -5, 5)}, .attrs = {{"axis", axis}}});
    t.add(op, {.name = "logits 4x1000", .inputs = {in({4, 1000}, -10, 10)}});
    t.add(op, {.name = "large values", .inputs = {in({3, 17}, 50, 90)}, .attrs = {{"axis", int64_t{1}}}});
  }

  for (int64_t largest : {0, 1}) {
    const std::string side = largest != 0 ? "largest" : "smallest";
    t.add("top_k", {.name = side + " 3 of the last axis", .inputs = {in({4, 10})}, .attrs = {{"k", int64_t{3}}, {"largest", largest}},
                    .num_outputs = 2});
    t.add("top_k", {.name = side + " 2 along a middle axis", .inputs = {in({2, 6, 5})},
                    .attrs = {{"k", int64_t{2}}, {"axis", int64_t{1}}, {"largest", largest}}, .num_outputs = 2});
  }
  t.add("top_k", {.name = "all of them, unsorted", .inputs = {in({3, 7})}, .attrs = {{"k", int64_t{7}}, {"sorted", int64_t{0}}},
                  .num_outputs = 2});
  t.add("top_k", {.name = "k 0", .inputs = {in({3, 7})}, .attrs = {{"k", int64_t{0}}}, .num_outputs = 2});

  for (int64_t axis : {0, 1, 2, -1})
    t.add("cumsum", {.name = "2x5x7 axis " + std::to_string(axis), .inputs = {in({2, 5, 7})}, .attrs = {{"axis", axis}}});
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1})
      t.add("cumsum", {.name = "exclusive " + std::to_string(exclusive) + " reverse " + std::to_string(reverse),
                       .inputs = {in({3, 40})},
                       .attrs = {{"axis", int64_t{1}}, {"exclusive", exclusive}, {"reverse", reverse}}});
  t.add("cumsum", {.name = "int64", .inputs = {typed(DType::i64, {4, 6}, -50, 50)}, .attrs = {{"axis", int64_t{0}}, {"reverse", int64_t{1}}}});
  t.add("cumsum", {.name = "int32", .inputs = {typed(DType::i32, {30}, -50, 50)}, .attrs = {{"axis", int64_t{0}}, {"exclusive", int64_t{1}}}});
}

}  // namespace mt::optest
