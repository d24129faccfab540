#pragma once
// The clock seam (docs/architecture.md, "Injected time"): wall-clock time for expiry and a cancellable
// wait for backoff. Production code uses systemClock(); tests use FakeClock (tests/unit/kube), whose
// waits return at once and advance its time, so backoff schedules are asserted, not slept through.

#include <chrono>
#include <stop_token>

namespace restarter::kube {

class Clock {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
  // Waits `duration` or until `stop` is requested. Returns false if stopped.
  // Thread-safe: may be called from several threads at once.
  virtual bool waitFor(std::chrono::milliseconds duration, std::stop_token stop) = 0;
};

// The process-wide real clock (system_clock; waits on a condition variable, wakes on stop).
Clock& systemClock();

}  // namespace restarter::kube
