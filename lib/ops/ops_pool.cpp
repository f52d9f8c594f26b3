// Op schemas of the pool family.
#include "lib/ops/registry.h"

namespace mt {

void register_pool_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
