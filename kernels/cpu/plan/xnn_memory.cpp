#include "kernels/cpu/plan/xnn_memory.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "kernels/cpu/plan/plan_builder.h"
#include "lib/core/error.h"

namespace mt::cpu {
namespace {

// The huge-page blocks handed out, by address: their mapped lengths (XNNPACK frees every block
// through the same deallocate). Operators are created and set up from any thread.
struct HugeBlocks {
  std::mutex mutex;
  std::unordered_map<void*, size_t> lengths;
};

HugeBlocks& huge_blocks() {
  static HugeBlocks* blocks = new HugeBlocks;  // never destroyed: operators may outlive static destructors
  return *blocks;
}

// The mapped length of huge block `p`, 0 if `p` is malloc's.
size_t huge_length(void* p) {
  HugeBlocks& blocks = huge_blocks();
  const std::lock_guard lock(blocks.mutex);
  const auto it = blocks.lengths.find(p);
  return it == blocks.lengths.end() ? 0 : it->second;
}

void* allocate(void*, size_t size) { return std::malloc(size); }

void deallocate(void*, void* p) {
  if (p == nullptr) return;
  size_t length = 0;
  {
    HugeBlocks& blocks = huge_blocks();
    const std::lock_guard lock(blocks.mutex);
    if (const auto it = blocks.lengths.find(p); it != blocks.lengths.end()) {
      length = it->second;
      blocks.lengths.erase(it);
    }
  }
  if (length > 0) munmap(p, length);
  else std::free(p);
}

void* reallocate(void*, void* p, size_t size) {
  const size_t old_length = p == nullptr ? 0 : huge_length(p);
  if (size < kXnnHugeBytes && old_length == 0) return std::realloc(p, size);
  if (old_length >= size) return p;
  const size_t length = (size + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;  // whole huge pages
  void* block = map_huge_pages(length);
  if (block == nullptr) return nullptr;  // the old block stays valid, as realloc's contract says
  {
    HugeBlocks& blocks = huge_blocks();
    const std::lock_guard lock(blocks.mutex);
    blocks.lengths.emplace(block, length);
  }
  if (p != nullptr) {
    std::memcpy(block, p, std::min(size, old_length > 0 ? old_length : malloc_usable_size(p)));
    deallocate(nullptr, p);
  }
  return block;
}

void* aligned_allocate(void*, size_t alignment, size_t size) {
  void* p = nullptr;
  return posix_memalign(&p, std::max(alignment, sizeof(void*)), size) == 0 ? p : nullptr;
}

void aligned_deallocate(void*, void* p) { std::free(p); }

const xnn_allocator kAllocator{.context = nullptr,
                               .allocate = allocate,
                               .reallocate = reallocate,
                               .deallocate = deallocate,
                               .aligned_allocate = aligned_allocate,
                               .aligned_deallocate = aligned_deallocate};

}  // namespace

const xnn_allocator* xnn_memory() { return &kAllocator; }

void initialize_xnnpack() {
  static std::once_flag once;  // a failure throws out of call_once, and the next plan tries again
  std::call_once(once, [] {
    const xnn_status status = xnn_initialize(&kAllocator);
    if (status != xnn_status_success)
      fail(ExitCode::failure, "XNNPACK failed to initialize (status {}): unsupported CPU?", static_cast<int>(status));
  });
}

}  // namespace mt::cpu
