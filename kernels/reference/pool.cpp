// Reference kernels of the pool family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_pool_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
