// The Vulkan device of the unit tests that need one (the sub-allocator): device 0's context, or,
// where there is no Vulkan, a skip that says why, except with MT_REQUIRE_VULKAN=1 (scripts/test.sh,
// CI) where a missing device fails the test, as in the op harness (tests/ops/test_ops_vulkan.cpp).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "kernels/vulkan/runtime/context.h"
#include "lib/core/error.h"

namespace mt::vulkan::test {

inline bool vulkan_required() {
  const char* value = std::getenv("MT_REQUIRE_VULKAN");
  return value != nullptr && std::string(value) == "1";
}

// Device 0's context, or nullptr after reporting the skip (or failing, when Vulkan is required).
inline std::shared_ptr<Context> device_or_skip() {
  try {
    return Context::get(0);
  } catch (const Error& e) {
    if (vulkan_required()) FAIL("MT_REQUIRE_VULKAN=1 but there is no Vulkan device: " << std::string(e.what()));
    MESSAGE("SKIP: no Vulkan device: " << std::string(e.what()));
    return nullptr;
  }
}

}  // namespace mt::vulkan::test
