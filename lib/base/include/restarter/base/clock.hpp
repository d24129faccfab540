#pragma once
// The clock seam (docs/architecture.md, "Injected time"). Two clocks, because they answer two
// questions:
//   - wallNow() (system_clock): what time it is, for anything written into or compared with a
//     timestamp of the API or of a certificate: Event and Lease times, `last-rollout`
//     annotations, pod expiry, certificate validity. It may jump (NTP steps, an operator's date).
//   - monotonicNow() (steady_clock): how long something took or has been waiting, for debounce,
//     backoff, the work queue's due times, the write limiter's tokens and leader election's
//     "how long since the Lease last changed". It never jumps, so a step of the node's wall clock
//     cannot shorten a lease or a backoff. Its values mean nothing outside this process.
// waitFor() waits on monotonic time. Production code uses systemClock(); unit tests use
// tests/support's FakeClock, whose two clocks tests advance independently.

#include <chrono>
#include <stop_token>

namespace restarter::base {

class Clock {
 public:
  using WallTime = std::chrono::system_clock::time_point;
  using MonotonicTime = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual WallTime wallNow() const = 0;
  virtual MonotonicTime monotonicNow() const = 0;
  // Waits `duration` of monotonic time or until `stop` is requested. Returns false if stopped.
  // Thread-safe: may be called from several threads at once.
  virtual bool waitFor(std::chrono::milliseconds duration, std::stop_token stop) = 0;
};

// The process-wide real clock (system_clock and steady_clock; waits on a condition variable,
// wakes on stop). Stateless, so shared by every thread without a lock.
Clock& systemClock();

}  // namespace restarter::base
