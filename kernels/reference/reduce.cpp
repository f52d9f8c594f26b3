// Reference kernels of the reduce family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_reduce_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
