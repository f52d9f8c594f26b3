// Cases of the signal family: dft of real and complex signals along inner and outer axes, zero-padded
// and truncated, inverse, one-sided, a length that is not a power of two; reverse_sequence on both
// axis orders, with int32 and int64 lengths (0 and full included) and integer data.
#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_signal_cases(CaseTable& t) {
  t.add("dft", {.name = "real, axis 1", .inputs = {in({2, 12, 1})}});
  t.add("dft", {.name = "complex, middle axis of 4, inverse",
                .inputs = {in({2, 7, 3, 2})},
                .attrs = {{"axis", int64_t{1}}, {"inverse", int64_t{1}}}});
  t.add("dft", {.name = "real, one-sided, zero-padded to 20",
                .inputs = {in({3, 15, 1})},
                .attrs = {{"onesided", int64_t{1}}, {"length", int64_t{20}}}});
  t.add("dft", {.name = "complex, truncated to 5, axis 0",
                .inputs = {in({9, 4, 2})},
                .attrs = {{"axis", int64_t{0}}, {"length", int64_t{5}}}});

  t.add("reverse_sequence",
        {.name = "time-major, int64 lengths", .inputs = {in({5, 4, 3}), given(DType::i64, {4}, {5, 0, 3, 1})}});
  t.add("reverse_sequence", {.name = "batch-major, int32 lengths, int32 data",
                             .inputs = {typed(DType::i32, {3, 6}, -9, 9), given(DType::i32, {3}, {6, 2, 4})},
                             .attrs = {{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}});
}

}  // namespace mt::optest
