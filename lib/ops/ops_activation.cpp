// Op schemas of the activation family.
#include "lib/ops/registry.h"

namespace mt {

void register_activation_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
