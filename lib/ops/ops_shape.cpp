// Op schemas of the shape family.
#include "lib/ops/registry.h"

namespace mt {

void register_shape_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
