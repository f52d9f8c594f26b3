// Op schemas of the reduce family.
#include "lib/ops/registry.h"

namespace mt {

void register_reduce_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
