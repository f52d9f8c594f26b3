// The op test table: for every op of the registry, cases (input shapes, constants, attributes)
// that tests/ops/test_ops.cpp runs on the reference backend and on every other backend that
// accepts them, comparing the results. Each cases_<family>.cpp fills in its family.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/ir/graph.h"

namespace mt::optest {

// One input of a case: a graph input (fed random data) or a constant (random data baked into
// the graph, as weights are), or absent (an optional input left out).
struct CaseInput {
  DType dtype = DType::f32;
  Shape shape;
  bool constant = false;
  bool absent = false;
  double low = -1;  // values are uniform in [low, high): floats continuous, integers whole
  double high = 1;
  std::optional<QuantParams> quant;  // int8 tensors: their scale and zero point
  // When set, the data instead of random values, repeated to fill the shape: the special values
  // (NaN, infinities, halves, zeros) that random data does not hit.
  std::vector<double> values;
};

inline CaseInput in(Shape shape, double low = -1, double high = 1) { return {DType::f32, std::move(shape), false, false, low, high}; }
inline CaseInput weight(Shape shape, double low = -1, double high = 1) { return {DType::f32, std::move(shape), true, false, low, high}; }
inline CaseInput typed(DType dtype, Shape shape, double low, double high, bool constant = false) {
  return {dtype, std::move(shape), constant, false, low, high};
}
inline CaseInput absent() { return {.absent = true}; }
inline CaseInput given(DType dtype, Shape shape, std::vector<double> values) {
  return {.dtype = dtype, .shape = std::move(shape), .values = std::move(values)};
}

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;

struct OpCase {
  std::string name;  // what the case exercises, e.g. "3x3 s2 pads 1,0,2,1"
  std::vector<CaseInput> inputs;
  Attributes attrs;
  int num_outputs = 1;
  // Quantization parameters of the outputs (int8 outputs of quantized ops), by output index.
  std::vector<std::optional<QuantParams>> output_quant;
  // Allowed max abs error of float outputs, relative to max(1, range of the reference output).
  double tolerance = 1e-4;
  // Allowed max abs difference of integer outputs (int8 rounding may differ by one step).
  double integer_tolerance = 0;
};

class CaseTable {
 public:
  void add(const std::string& op, OpCase c) { cases_[op].push_back(std::move(c)); }
  const std::vector<OpCase>* find(const std::string& op) const {
    auto it = cases_.find(op);
    return it == cases_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, std::vector<OpCase>>& all() const { return cases_; }

 private:
  std::map<std::string, std::vector<OpCase>> cases_;
};

void add_activation_cases(CaseTable& table);
void add_binary_cases(CaseTable& table);
void add_logic_cases(CaseTable& table);
void add_reduce_cases(CaseTable& table);
void add_norm_cases(CaseTable& table);
void add_linear_cases(CaseTable& table);
void add_conv_cases(CaseTable& table);
void add_pool_cases(CaseTable& table);
void add_resize_cases(CaseTable& table);
void add_shape_cases(CaseTable& table);
void add_index_cases(CaseTable& table);
void add_quant_cases(CaseTable& table);
void add_recurrent_cases(CaseTable& table);
void add_sample_cases(CaseTable& table);
void add_signal_cases(CaseTable& table);
void add_int8_cases(CaseTable& table);  // int8 variants of compute ops (lib/quant's scheme)

// Every case of every family.
const CaseTable& case_table();

}  // namespace mt::optest
