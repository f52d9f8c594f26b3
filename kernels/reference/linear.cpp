// Reference kernels of the linear family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_linear_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
