// The allocator XNNPACK runs on (xnn_memory.h): blocks keep their contents across reallocation in
// and out of huge-page mappings, and every kind of block is freed by the function XNNPACK uses.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/plan/xnn_memory.h"

namespace mt::test {
namespace {

void fill(void* p, size_t bytes, uint8_t seed) {
  auto* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < bytes; ++i) b[i] = static_cast<uint8_t>(seed + i * 7);
}

bool holds(const void* p, size_t bytes, uint8_t seed) {
  const auto* b = static_cast<const uint8_t*>(p);
  for (size_t i = 0; i < bytes; ++i)
    if (b[i] != static_cast<uint8_t>(seed + i * 7)) return false;
  return true;
}

}  // namespace

TEST_CASE("xnn_memory: reallocation keeps the contents, small to huge to larger and back") {
  const xnn_allocator& a = *cpu::xnn_memory();
  const size_t small = 1000, huge = cpu::kXnnHugeBytes + 4096, larger = 3 * cpu::kXnnHugeBytes + 100;
  void* p = a.reallocate(a.context, nullptr, small);
  REQUIRE(p != nullptr);
  fill(p, small, 3);
  p = a.reallocate(a.context, p, huge);  // malloc's block into a huge-page mapping
  REQUIRE(p != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20) == 0);
  CHECK(holds(p, small, 3));
  fill(p, huge, 5);
  void* same = a.reallocate(a.context, p, huge - 10);  // shrinking keeps the mapping
  CHECK(same == p);
  p = a.reallocate(a.context, p, larger);  // past the 2 MiB it has: a new mapping
  REQUIRE(p != nullptr);
  CHECK(holds(p, huge, 5));
  fill(p, larger, 9);  // every byte of it is writable
  CHECK(holds(p, larger, 9));
  a.deallocate(a.context, p);
  a.deallocate(a.context, nullptr);
}

TEST_CASE("xnn_memory: plain and aligned blocks") {
  const xnn_allocator& a = *cpu::xnn_memory();
  void* p = a.allocate(a.context, 100);
  REQUIRE(p != nullptr);
  fill(p, 100, 1);
  p = a.reallocate(a.context, p, 5000);  // under the threshold: realloc
  REQUIRE(p != nullptr);
  CHECK(holds(p, 100, 1));
  a.deallocate(a.context, p);
  for (size_t alignment : {size_t{1}, size_t{16}, size_t{64}, size_t{4096}}) {
    void* q = a.aligned_allocate(a.context, alignment, 2 * cpu::kXnnHugeBytes);
    REQUIRE(q != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(q) % alignment == 0);
    fill(q, 2 * cpu::kXnnHugeBytes, 2);
    a.aligned_deallocate(a.context, q);
  }
}

}  // namespace mt::test
