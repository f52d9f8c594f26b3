// Op schemas of the norm family.
#include "lib/ops/registry.h"

namespace mt {

void register_norm_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
