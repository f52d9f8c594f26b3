// Op schemas of the binary family.
#include "lib/ops/registry.h"

namespace mt {

void register_binary_ops(OpRegistry& /*registry*/) {}

}  // namespace mt
