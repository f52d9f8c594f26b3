// Cases of the logic family: comparisons of every dtype with broadcasting and with the values
// that decide them (equal elements, NaN, infinities; float values fp16 holds exactly, for vulkan fp16), boolean ops on bool tensors, is_nan and
// is_inf on NaN and infinities with their attributes, and where selecting every dtype with its
// three operands broadcast.
#include <limits>

#include "tests/ops/op_cases.h"

namespace mt::optest {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const char* const kComparisons[] = {"equal", "less", "less_or_equal", "greater", "greater_or_equal"};
const char* const kBooleanOps[] = {"logical_and", "logical_or", "logical_xor"};

}  // namespace

void add_logic_cases(CaseTable& t) {
  for (const char* op : kComparisons) {
    // Quarters, which fp16 holds exactly (vulkan fp16 compares its stored inputs), equal pairs among them.
    const std::vector<double> quarters = {-1.5, 0.25, 0.75, -0.25, 1, 0.5, -0.75};
    t.add(op, {.name = "float32 broadcast",
               .inputs = {given(DType::f32, {2, 5, 3, 4}, quarters),
                          given(DType::f32, {5, 1, 1}, {0.25, -0.75, 1, 0, 0.5})}});
    CaseInput row = given(DType::f32, {6}, {0.5, -1.5, 0.75, 1, -0.25, 0.25});
    row.constant = true;
    t.add(op, {.name = "float32 constant row", .inputs = {given(DType::f32, {1, 3, 4, 6}, quarters), row}});
    // Every pair of these meets: equal values, NaN (never equal, never ordered), signed zeros.
    const std::vector<double> special = {-1, 0, -0.0, 1, kNaN, kInf, -kInf};
    t.add(op, {.name = "float32 NaN, infinities, zeros",
               .inputs = {given(DType::f32, {7, 1}, special), given(DType::f32, {7}, special)}});
    for (DType dtype : {DType::i64, DType::i32, DType::i8, DType::u8}) {
      const double low = dtype == DType::u8 ? 0 : -3;
      t.add(op, {.name = std::string(dtype_name(dtype)) + " broadcast",
                 .inputs = {typed(dtype, {3, 1, 4}, low, low + 6), typed(dtype, {2, 1}, low, low + 6)}});
    }
    t.add(op, {.name = "bool", .inputs = {typed(DType::boolean, {4, 3}, 0, 2), typed(DType::boolean, {3}, 0, 2)}});
  }

  for (const char* op : kBooleanOps) {
    t.add(op, {.name = "same shape",
               .inputs = {typed(DType::boolean, {3, 4, 5}, 0, 2), typed(DType::boolean, {3, 4, 5}, 0, 2)}});
    t.add(op, {.name = "broadcast [N,1,W] x [C,1]",
               .inputs = {typed(DType::boolean, {3, 1, 6}, 0, 2), typed(DType::boolean, {4, 1}, 0, 2)}});
    t.add(op, {.name = "scalar B", .inputs = {typed(DType::boolean, {1000}, 0, 2), typed(DType::boolean, {}, 1, 2)}});
  }
  t.add("logical_not", {.name = "4-D", .inputs = {typed(DType::boolean, {2, 3, 4, 5}, 0, 2)}});
  t.add("logical_not", {.name = "long vector", .inputs = {typed(DType::boolean, {1031}, 0, 2)}});

  const std::vector<double> classes = {kNaN, kInf, -kInf, 0, 1.5, -2, -kNaN, 3.4e38};
  t.add("is_nan", {.name = "NaN, infinities, finite", .inputs = {given(DType::f32, {2, 8}, classes)}});
  t.add("is_nan", {.name = "random 4-D", .inputs = {in({1, 7, 5, 3})}});
  t.add("is_inf", {.name = "both signs", .inputs = {given(DType::f32, {2, 8}, classes)}});
  t.add("is_inf", {.name = "positive only",
                   .inputs = {given(DType::f32, {8}, classes)},
                   .attrs = {{"detect_negative", int64_t{0}}}});
  t.add("is_inf", {.name = "negative only",
                   .inputs = {given(DType::f32, {8}, classes)},
                   .attrs = {{"detect_positive", int64_t{0}}}});
  t.add("is_inf", {.name = "neither",
                   .inputs = {given(DType::f32, {8}, classes)},
                   .attrs = {{"detect_positive", int64_t{0}}, {"detect_negative", int64_t{0}}}});

  t.add("where", {.name = "float32 same shape",
                  .inputs = {typed(DType::boolean, {1, 7, 5, 3}, 0, 2), in({1, 7, 5, 3}), in({1, 7, 5, 3})}});
  t.add("where", {.name = "float32 all three broadcast",
                  .inputs = {typed(DType::boolean, {3, 1, 1}, 0, 2), in({1, 4, 1}), in({5})}});
  t.add("where", {.name = "float32 constant Y [C,1,1]",
                  .inputs = {typed(DType::boolean, {2, 5, 3, 4}, 0, 2), in({2, 5, 3, 4}), weight({5, 1, 1})}});
  t.add("where", {.name = "int64 scalar condition",
                  .inputs = {typed(DType::boolean, {}, 0, 2), typed(DType::i64, {2, 3}, -1000, 1000),
                             typed(DType::i64, {2, 3}, -1000, 1000)}});
  t.add("where", {.name = "int32 rank 5",
                  .inputs = {typed(DType::boolean, {2, 1, 3, 1, 2}, 0, 2), typed(DType::i32, {1, 2, 1, 4, 2}, -50, 50),
                             typed(DType::i32, {2}, -50, 50)}});
  t.add("where", {.name = "uint8",
                  .inputs = {typed(DType::boolean, {4, 4}, 0, 2), typed(DType::u8, {4, 4}, 0, 256),
                             typed(DType::u8, {4}, 0, 256)}});
  t.add("where", {.name = "bool",
                  .inputs = {typed(DType::boolean, {6}, 0, 2), typed(DType::boolean, {6}, 0, 2),
                             typed(DType::boolean, {1}, 0, 2)}});
}

}  // namespace mt::optest
