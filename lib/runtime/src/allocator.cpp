#include "restarter/runtime/allocator.hpp"

// A C library header first: it defines __GLIBC__ (through <features.h>); tested before any, as
// this file once did, the macro is undefined and both functions compile to nothing.
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace restarter::runtime {

bool configureAllocator() {
#if defined(__GLIBC__)
  const bool arenas = mallopt(M_ARENA_MAX, 2) == 1;
  const bool threshold = mallopt(M_MMAP_THRESHOLD, 64 * 1024) == 1;
  return arenas && threshold;
#else
  return false;
#endif
}

bool returnFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}

}  // namespace restarter::runtime
