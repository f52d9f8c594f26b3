// Reference kernels of the conv family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_conv_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
