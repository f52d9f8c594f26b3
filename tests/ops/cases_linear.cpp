// Cases of the linear family: linear with and without bias, batched rows, fused clamps, odd sizes;
// matmul with 2-D, batched, broadcast batch dims, and 1-D operands (numpy promotion).
#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_linear_cases(CaseTable& t) {
  t.add("linear", {.name = "1x64 -> 10 with bias", .inputs = {in({1, 64}), weight({10, 64}), weight({10})}});
  t.add("linear", {.name = "odd sizes 3x37 -> 19", .inputs = {in({3, 37}), weight({19, 37}), weight({19})}});
  t.add("linear", {.name = "no bias", .inputs = {in({2, 16}), weight({8, 16})}});
  t.add("linear", {.name = "rank 3 input", .inputs = {in({2, 5, 12}), weight({7, 12}), weight({7})}});
  t.add("linear", {.name = "fused relu6", .inputs = {in({4, 20}, -2, 2), weight({9, 20}), weight({9})},
                   .attrs = {{"act_min", 0.0}, {"act_max", 6.0}}});
  t.add("linear", {.name = "weights as input", .inputs = {in({2, 6}), in({3, 6}), in({3})}});
  t.add("linear", {.name = "1-D input", .inputs = {in({12}), weight({5, 12}), weight({5})}});

  t.add("matmul", {.name = "2-D 5x7 @ 7x3", .inputs = {in({5, 7}), in({7, 3})}});
  t.add("matmul", {.name = "constant B", .inputs = {in({4, 33}), weight({33, 17})}});
  t.add("matmul", {.name = "batched 2x3x4 @ 2x4x5", .inputs = {in({2, 3, 4}), in({2, 4, 5})}});
  t.add("matmul", {.name = "broadcast batch 2x1x3x4 @ 5x4x6", .inputs = {in({2, 1, 3, 4}), in({5, 4, 6})}});
  t.add("matmul", {.name = "batched A, 2-D B", .inputs = {in({3, 6, 8}), in({8, 2})}});
  t.add("matmul", {.name = "1-D A", .inputs = {in({6}), in({2, 6, 3})}});
  t.add("matmul", {.name = "1-D B", .inputs = {in({4, 6}), in({6})}});
  t.add("matmul", {.name = "1-D both (dot)", .inputs = {in({9}), in({9})}});

  t.add("det", {.name = "batch of 3x3", .inputs = {in({2, 4, 3, 3}, -2, 2)}});
  t.add("det", {.name = "one 6x6 (pivoting)", .inputs = {in({6, 6}, -1, 1)}});
  // Equal rows: singular, the determinant 0.
  t.add("det", {.name = "singular", .inputs = {given(DType::f32, {2, 2}, {1.5, -2, 1.5, -2})}});
}

}  // namespace mt::optest
