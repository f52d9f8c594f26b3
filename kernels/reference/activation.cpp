// Reference kernels of the activation family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_activation_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
