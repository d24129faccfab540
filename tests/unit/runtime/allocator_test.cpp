#include "restarter/runtime/allocator.hpp"

#include <cstdlib>

#include <catch2/catch.hpp>

// The settings must reach glibc where its allocator is the one in use: a missing include once
// compiled both functions to nothing, and serve-controller kept 11 malloc arenas and never
// returned a page. Under ASan or TSan the sanitizer's allocator replaces glibc's and may refuse
// mallopt (ASan's does): there, only that both calls return.
TEST_CASE("allocator settings reach glibc", "[allocator]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  static_cast<void>(restarter::runtime::configureAllocator());
  static_cast<void>(restarter::runtime::returnFreeMemory());
  SUCCEED("a sanitizer's allocator is in use");
#elif defined(__GLIBC__)
  CHECK(restarter::runtime::configureAllocator());
  CHECK(restarter::runtime::returnFreeMemory());
#else
  CHECK_FALSE(restarter::runtime::configureAllocator());
  CHECK_FALSE(restarter::runtime::returnFreeMemory());
#endif
}
