// Op schemas of the linear family.
#include "lib/ops/registry.h"

namespace mt {

void register_linear_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
