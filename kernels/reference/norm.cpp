// Reference kernels of the norm family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_norm_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
