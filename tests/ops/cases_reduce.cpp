// Cases of the reduce family: all axes, single axes (first, middle, last, negative), several
// axes, keepdims on and off; softmax and log_softmax along every axis of a 4-D tensor.
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
  for (const char* op : {"reduce_mean", "reduce_sum", "reduce_max", "reduce_min"}) {
    for (const auto& c : axes_cases)
      t.add(op, {.name = c.name, .inputs = {in({2, 5, 3, 7})}, .attrs = {{"axes", c.axes}, {"keepdims", c.keepdims}}});
    t.add(op, {.name = "rank 2 rows", .inputs = {in({9, 33})}, .attrs = {{"axes", Ints{1}}}});
    t.add(op, {.name = "rank 1", .inputs = {in({100})}, .attrs = {{"axes", Ints{0}}, {"keepdims", int64_t{0}}}});
  }
  for (const char* op : {"softmax", "log_softmax"}) {
    for (int64_t axis : {-1, 0, 1, 2, 3})
      t.add(op, {.name = "2x5x3x7 axis " + std::to_string(axis), .inputs = {in({2, 5, 3, 7}, -5, 5)}, .attrs = {{"axis", axis}}});
    t.add(op, {.name = "logits 4x1000", .inputs = {in({4, 1000}, -10, 10)}});
    t.add(op, {.name = "large values", .inputs = {in({3, 17}, 50, 90)}, .attrs = {{"axis", int64_t{1}}}});
  }
}

}  // namespace mt::optest
