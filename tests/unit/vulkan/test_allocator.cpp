// The backend's sub-allocator (kernels/vulkan/runtime/allocator.h) on device 0: ranges aligned for
// storage-buffer descriptors and disjoint, freed ranges reused first-fit and coalesced, requests
// larger than a block given a block of their own (and back to the device when released), staging
// memory mapped. Needs a Vulkan device (lavapipe in CI): skipped without one unless
// MT_REQUIRE_VULKAN=1, where that fails.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "tests/unit/vulkan/vulkan_test_util.h"

using namespace mt;
using namespace mt::vulkan;

namespace {

bool disjoint(const Allocation& a, const Allocation& b) {
  return a.block != b.block || a.offset + a.size <= b.offset || b.offset + b.size <= a.offset;
}

}  // namespace

TEST_CASE("vulkan allocator: aligned, disjoint, reused and coalesced ranges") {
  const auto context = test::device_or_skip();
  if (!context) return;
  Allocator& allocator = context->allocator();
  const VkDeviceSize alignment = allocator.alignment();
  CHECK(alignment >= 64);
  CHECK((alignment & (alignment - 1)) == 0);
  CHECK(alignment % context->info().min_storage_buffer_offset_alignment == 0);

  const Allocation a = allocator.allocate(100, MemoryKind::device);
  const Allocation b = allocator.allocate(1, MemoryKind::device);
  const Allocation c = allocator.allocate(3 * alignment, MemoryKind::device);
  for (const Allocation* x : {&a, &b, &c}) {
    REQUIRE(static_cast<bool>(*x));
    CHECK(x->buffer != VK_NULL_HANDLE);
    CHECK(x->offset % alignment == 0);
    CHECK(x->size % alignment == 0);
  }
  CHECK(a.size == alignment * ((100 + alignment - 1) / alignment));
  CHECK(b.size == alignment);  // even one byte takes a whole aligned range
  CHECK(c.size == 3 * alignment);
  CHECK(disjoint(a, b));
  CHECK(disjoint(a, c));
  CHECK(disjoint(b, c));

  // First fit: a range of a's size goes where a was.
  allocator.release(a);
  const Allocation again = allocator.allocate(100, MemoryKind::device);
  CHECK(again.block == a.block);
  CHECK(again.offset == a.offset);
  // Released neighbours coalesce: b's and c's ranges, adjacent when they share a block, take one
  // request of their joint size.
  allocator.release(b);
  allocator.release(c);
  if (b.block == c.block && b.offset + b.size == c.offset) {
    const Allocation joint = allocator.allocate(b.size + c.size, MemoryKind::device);
    CHECK(joint.block == b.block);
    CHECK(joint.offset == b.offset);
    allocator.release(joint);
  }
  allocator.release(again);
}

TEST_CASE("vulkan allocator: a request larger than a block gets its own, given back when released") {
  const auto context = test::device_or_skip();
  if (!context) return;
  Allocator& allocator = context->allocator();
  const Allocation small = allocator.allocate(64, MemoryKind::device);  // keeps the shared block alive
  const VkDeviceSize big_bytes = Allocator::kBlockBytes + allocator.alignment();
  const Allocation big = allocator.allocate(big_bytes, MemoryKind::device);
  REQUIRE(static_cast<bool>(big));
  CHECK(big.block != small.block);
  CHECK(big.offset == 0);
  CHECK(big.size == big_bytes);
  allocator.release(big);
  // The big block went back to the device, so the next one takes its slot again.
  const Allocation next = allocator.allocate(big_bytes, MemoryKind::device);
  CHECK(next.block == big.block);
  allocator.release(next);
  allocator.release(small);
}

TEST_CASE("vulkan allocator: staging memory is mapped at each range's offset") {
  const auto context = test::device_or_skip();
  if (!context) return;
  Allocator& allocator = context->allocator();
  const Allocation first = allocator.allocate(256, MemoryKind::host);
  const Allocation second = allocator.allocate(256, MemoryKind::host);
  REQUIRE(first.mapped != nullptr);
  REQUIRE(second.mapped != nullptr);
  CHECK(disjoint(first, second));
  if (first.block == second.block)
    CHECK(second.mapped - first.mapped ==
          static_cast<std::ptrdiff_t>(second.offset) - static_cast<std::ptrdiff_t>(first.offset));
  std::vector<std::byte> pattern(256);
  for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::byte>(i);
  std::memcpy(first.mapped, pattern.data(), pattern.size());
  std::memset(second.mapped, 0, 256);
  CHECK(std::memcmp(first.mapped, pattern.data(), pattern.size()) == 0);
  allocator.release(first);
  allocator.release(second);
}
