// Cases of the binary family: same shapes, numpy broadcasting in every direction (scalar,
// per-channel [C,1,1], row, column, both operands broadcast), constant operands, integer
// arithmetic in every integer dtype (mod, bit_shift and pow included), and add's fused clamp.
#include "tests/ops/op_cases.h"

namespace mt::optest {
namespace {

struct Pair {
  std::string name;
  CaseInput a, b;
};

std::vector<Pair> broadcast_pairs(double low, double high, double b_low, double b_high) {
  return {
      {"same shape 1x7x5x3", in({1, 7, 5, 3}, low, high), in({1, 7, 5, 3}, b_low, b_high)},
      {"long vectors", in({1031}, low, high), in({1031}, b_low, b_high)},
      {"scalar B", in({2, 3, 4}, low, high), in({}, b_low, b_high)},
      {"scalar A", in({}, low, high), in({2, 3, 4}, b_low, b_high)},
      {"per-channel constant [C,1,1]", in({2, 5, 3, 4}, low, high), weight({5, 1, 1}, b_low, b_high)},
      {"row [W]", in({1, 3, 4, 6}, low, high), in({6}, b_low, b_high)},
      {"column [H,1]", in({2, 4, 5}, low, high), in({4, 1}, b_low, b_high)},
      {"both broadcast [N,1,W] x [1,C,1]", in({3, 1, 5}, low, high), in({1, 4, 1}, b_low, b_high)},
      {"rank 5", in({2, 1, 3, 1, 2}, low, high), in({1, 2, 1, 4, 2}, b_low, b_high)},
      {"constant A", weight({1, 6, 1, 1}, low, high), in({2, 6, 3, 3}, b_low, b_high)},
  };
}

}  // namespace

void add_binary_cases(CaseTable& t) {
  for (const char* op : {"add", "sub", "mul", "max", "min"})
    for (auto& p : broadcast_pairs(-3, 3, -3, 3)) t.add(op, {.name = p.name, .inputs = {p.a, p.b}});
  for (auto& p : broadcast_pairs(-3, 3, 0.5, 3)) t.add("div", {.name = p.name, .inputs = {p.a, p.b}});
  for (auto& p : broadcast_pairs(0.1, 3, -2, 2)) t.add("pow", {.name = p.name, .inputs = {p.a, p.b}});
  t.add("pow", {.name = "square (constant exponent 2)", .inputs = {in({2, 9}, -3, 3), {DType::f32, {}, true, false, 2, 2}}});

  t.add("add", {.name = "fused relu6", .inputs = {in({1, 4, 5, 5}, -6, 6), in({1, 4, 5, 5}, -6, 6)},
                .attrs = {{"act_min", 0.0}, {"act_max", 6.0}}});
  t.add("add", {.name = "fused relu, broadcast", .inputs = {in({1, 4, 5, 5}, -3, 3), weight({4, 1, 1})},
                .attrs = {{"act_min", 0.0}}});

  for (DType dtype : {DType::i64, DType::i32}) {
    const std::string type(dtype_name(dtype));
    for (const char* op : {"add", "sub", "mul", "max", "min"})
      t.add(op, {.name = type + " broadcast", .inputs = {typed(dtype, {2, 3}, -100, 100), typed(dtype, {3}, -100, 100)}});
    t.add("div", {.name = type + " truncating", .inputs = {typed(dtype, {2, 4}, -100, 100), typed(dtype, {4}, 1, 9)}});
    t.add("div", {.name = type + " negative divisor", .inputs = {typed(dtype, {5}, -100, 100), typed(dtype, {}, -7, -2)}});
  }

  // Plain (not quantized) int8 and uint8 integers wrap like the wider ones.
  for (DType dtype : {DType::i8, DType::u8}) {
    const std::string type(dtype_name(dtype));
    const double low = dtype == DType::i8 ? -128 : 0, high = dtype == DType::i8 ? 128 : 256;
    for (const char* op : {"add", "sub", "mul", "max", "min"})
      t.add(op, {.name = type + " broadcast, wrapping",
                 .inputs = {typed(dtype, {2, 5}, low, high), typed(dtype, {5}, low, high)}});
    t.add("div", {.name = type + " truncating", .inputs = {typed(dtype, {3, 4}, low, high), typed(dtype, {4}, 1, 12)}});
  }
  t.add("div",
        {.name = "int8 negative divisor", .inputs = {typed(DType::i8, {7}, -128, 128), given(DType::i8, {}, {-3})}});

  // mod: floored (fmod 0, integers: the sign of B) and truncated (fmod 1: the sign of A), divisors
  // of both signs.
  for (DType dtype : {DType::i64, DType::i32, DType::i8}) {
    const std::string type(dtype_name(dtype));
    for (int64_t fmod : {0, 1})
      t.add("mod", {.name = type + " fmod " + std::to_string(fmod),
                    .inputs = {typed(dtype, {3, 5}, -100, 100), given(dtype, {5}, {-7, -3, 2, 5, 9})},
                    .attrs = {{"fmod", fmod}}});
  }
  // float16 (computed in float32, exact): ONNX's Max, Min and Mod (fmod 1) on half tensors.
  for (const char* op : {"max", "min"})
    t.add(op,
          {.name = "float16, broadcast", .inputs = {typed(DType::f16, {3, 5}, -4, 4), typed(DType::f16, {5}, -4, 4)}});
  t.add("mod", {.name = "float16 fmod 1, mixed signs",
                .inputs = {typed(DType::f16, {4, 6}, -50, 50), given(DType::f16, {6}, {3, -3, 7.5, -0.25, 11, 1})},
                .attrs = {{"fmod", int64_t{1}}}});
  t.add("mod", {.name = "uint8", .inputs = {typed(DType::u8, {4, 4}, 0, 256), given(DType::u8, {4}, {1, 3, 7, 200})}});
  t.add("mod", {.name = "float32 fmod 1, broadcast",
                .inputs = {in({2, 3, 5}, -10, 10), given(DType::f32, {5}, {-3, -1.7, 0.6, 2.5, 4})},
                .attrs = {{"fmod", int64_t{1}}}});
  t.add("mod", {.name = "float32 fmod 1, long vectors",
                .inputs = {in({1031}, -10, 10), in({1031}, 0.5, 3)},
                .attrs = {{"fmod", int64_t{1}}}});

  for (const char* direction : {"left", "right"})
    t.add("bit_shift", {.name = std::string(direction) + ", shifts past the width",
                        .inputs = {typed(DType::u8, {3, 6}, 0, 256), typed(DType::u8, {6}, 0, 11)},
                        .attrs = {{"direction", std::string(direction)}}});

  // Integer powers wrap; a negative exponent truncates toward zero (bases 1 and -1 keep magnitude 1).
  for (DType dtype : {DType::i64, DType::i32}) {
    const std::string type(dtype_name(dtype));
    t.add("pow", {.name = type, .inputs = {typed(dtype, {4, 6}, -6, 6), typed(dtype, {6}, 0, 9)}});
    t.add("pow", {.name = type + " negative exponents",
                  .inputs = {given(dtype, {4, 1}, {1, -1, 2, -3}), given(dtype, {3}, {-1, -2, -3})}});
  }
  t.add("pow", {.name = "int64 wrapping", .inputs = {given(DType::i64, {2}, {3, -7}), given(DType::i64, {}, {41})}});
}

}  // namespace mt::optest
