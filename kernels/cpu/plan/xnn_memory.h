// The allocator the cpu backend initializes XNNPACK with (xnn_initialize), and that initialisation. XNNPACK reallocates an
// operator's indirection buffer when the operator is set up, at planning: one pointer per output pixel
// and kernel tap, 0.9 MB for mobilenet_v2's stem conv, whose 220 pages' first writes cost 0.4 ms of
// that model's planning. Buffers reallocated to kXnnHugeBytes or more get their own mapping on
// transparent huge pages (map_huge_pages: one 2 MiB fault, ~0.08 ms; resident memory rounded up to 2
// MiB), everything else is malloc's. Operator weights, allocated aligned, stay malloc's: a model not
// prepacked packs megabytes of them, which huge pages would round up.
#pragma once

#include <xnnpack.h>

#include <cstddef>

namespace mt::cpu {

inline constexpr size_t kXnnHugeBytes = size_t{512} << 10;

const xnn_allocator* xnn_memory();

// Initialises XNNPACK with xnn_memory(), once per process, the first time a plan creates one of its
// operators (NodeContext::create_xnn): its cpuinfo reads the CPU's description from /sys and /proc,
// ~0.2 ms that a plan of mt's own kernels alone (MobileNetV2, the ResNets, every int8 zoo model on
// VNNI) never pays. Throws Error(failure) where XNNPACK refuses this CPU. Thread-safe.
void initialize_xnnpack();

}  // namespace mt::cpu
