// Reference kernels of the binary family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_binary_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
