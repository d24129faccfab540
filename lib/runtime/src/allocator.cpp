#include "restarter/runtime/allocator.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace restarter::runtime {

void configureAllocator() {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 2);
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
}

void returnFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace restarter::runtime
