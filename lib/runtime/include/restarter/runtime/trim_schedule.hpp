#pragma once
// When serve-controller returns free heap pages to the kernel (allocator.hpp's returnFreeMemory).
// glibc keeps freed memory inside the process until asked; a trim right after the initial sync
// does not cover the burst of writes that follows it (every labeled workload annotated once),
// whose request bodies, answers and replaced cache entries are freed after that trim. So a trim
// is due:
//   - once, when the caches have synced;
//   - when a burst of work has ended: the work counter (finished reconciles) advanced since the
//     last trim and has stood still for `quiet`;
//   - every `period` in any case.
// Figures: docs/benchmarks.md, the content-aware rows (tests/bench/content_aware.sh). Owned by
// one thread (the manager's tick).

#include <chrono>
#include <cstdint>

namespace restarter::runtime {

class TrimSchedule {
 public:
  using Clock = std::chrono::steady_clock;

  TrimSchedule(Clock::duration quiet, Clock::duration period, Clock::time_point now);

  // Called on every tick with whether the caches have synced and the work counter's value now.
  // True: trim now (the schedule counts it as done).
  bool due(bool synced, std::uint64_t work, Clock::time_point now);

 private:
  Clock::duration quiet_;
  Clock::duration period_;
  bool trimmedAfterSync_ = false;
  Clock::time_point lastTrim_;
  std::uint64_t workAtTrim_ = 0;
  std::uint64_t lastWork_ = 0;
  Clock::time_point lastWorkChange_;
};

}  // namespace restarter::runtime
