#pragma once
// How a long-running process asks glibc's allocator to give memory back (docs/architecture.md,
// "Bounded servers"): a byte budget bounds what a server holds at once, but the process's RSS
// stays bounded only if freed memory leaves the process too.

namespace restarter::runtime {

// Call once, first thing in a serve command (before its threads start). Sets:
//  - two malloc arenas: glibc otherwise gives each allocating thread an arena of its own, each
//    keeping its freed memory mapped; with a dozen threads that is most of the RSS;
//  - a fixed mmap threshold of 64 KiB: every buffer from 64 KiB up (request bodies, list pages,
//    parsed trees' large strings) is its own mapping, returned to the kernel when freed. glibc
//    otherwise raises the threshold (up to 32 MiB) after the first large buffer is freed, and from
//    then on large buffers are carved out of the heap and stay resident after use.
// What the settings change for serve-controller (arenas and the memory they hold, from
// malloc_stats) and its steady state are measured in docs/benchmarks.md, "Memory: allocator and
// cache entries". For serve-webhook it keeps a large body, once freed, from staying
// resident; its peak is bounded by the byte budget (lib/webhook/src/server.cpp). A no-op where
// the allocator is not glibc's (the sanitizer builds replace it). True when glibc took both
// settings; false where there is no glibc (tests/unit/runtime/allocator_test.cpp holds it to true
// on glibc: once, a missing include made this a silent no-op).
bool configureAllocator();

// Returns free heap pages to the kernel (malloc_trim); cheap when there is nothing to return.
// True when it asked glibc; false where there is no glibc.
bool returnFreeMemory();

}  // namespace restarter::runtime
