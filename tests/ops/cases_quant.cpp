// Cases of the quantization family: quantize to int8 (results may differ by one step where a
// value falls on a rounding boundary) and dequantize from int8, with zero points on both sides.
#include "tests/ops/op_cases.h"

namespace mt::optest {

void add_quant_cases(CaseTable& t) {
  auto per_tensor = [](float scale, int32_t zero_point) { return QuantParams{{scale}, {zero_point}, -1}; };
  t.add("quantize", {.name = "1x3x4x4 scale 0.02 zp 3", .inputs = {in({1, 3, 4, 4}, -2, 2)},
                     .output_quant = {per_tensor(0.02f, 3)}, .integer_tolerance = 1});
  t.add("quantize", {.name = "saturating [2,5] scale 0.01 zp -20", .inputs = {in({2, 5}, -3, 3)},
                     .output_quant = {per_tensor(0.01f, -20)}, .integer_tolerance = 1});
  CaseInput q = typed(DType::i8, {1, 4, 3, 3}, -128, 128);
  q.quant = per_tensor(0.05f, -7);
  t.add("dequantize", {.name = "1x4x3x3 scale 0.05 zp -7", .inputs = {q}});
  CaseInput z = typed(DType::i8, {7}, -128, 128);
  z.quant = per_tensor(0.5f, 0);
  t.add("dequantize", {.name = "[7] scale 0.5 zp 0", .inputs = {z}});
}

}  // namespace mt::optest
