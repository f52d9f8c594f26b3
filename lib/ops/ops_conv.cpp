// Op schemas of the conv family.
#include "lib/ops/registry.h"

namespace mt {

void register_conv_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
