// Reference kernels of the shape family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_shape_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
