// Reference kernels of the resize family.
#include "kernels/reference/reference.h"

namespace mt::reference {

void register_resize_kernels(KernelTable& /*table*/) {}

}  // namespace mt::reference
