// Op schemas of the resize family.
#include "lib/ops/registry.h"

namespace mt {

void register_resize_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
