#include "tests/ops/op_cases.h"

namespace mt::optest {

const CaseTable& case_table() {
  static const CaseTable table = [] {
    CaseTable t;
    add_activation_cases(t);
    add_binary_cases(t);
    add_logic_cases(t);
    add_reduce_cases(t);
    add_norm_cases(t);
    add_linear_cases(t);
    add_conv_cases(t);
    add_pool_cases(t);
    add_resize_cases(t);
    add_shape_cases(t);
    add_index_cases(t);
    add_quant_cases(t);
    add_recurrent_cases(t);
    add_sample_cases(t);
    add_signal_cases(t);
    add_int8_cases(t);
    return t;
  }();
  return table;
}

}  // namespace mt::optest
