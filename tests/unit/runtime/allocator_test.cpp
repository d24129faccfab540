#include "restarter/runtime/allocator.hpp"

#include <cstdlib>

#include <catch2/catch.hpp>

// The settings must reach glibc where it is the C library: a missing include once compiled both
// functions to nothing, and serve-controller kept 11 malloc arenas and never returned a page.
TEST_CASE("allocator settings reach glibc", "[allocator]") {
#if defined(__GLIBC__)
  CHECK(restarter::runtime::configureAllocator());
  CHECK(restarter::runtime::returnFreeMemory());
#else
  CHECK_FALSE(restarter::runtime::configureAllocator());
  CHECK_FALSE(restarter::runtime::returnFreeMemory());
#endif
}
