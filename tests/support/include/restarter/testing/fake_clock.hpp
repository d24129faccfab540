#pragma once
// A base::Clock for tests (docs/architecture.md, "Injected time"): wall and monotonic time are
// separate counters that only the test moves. advance() moves both, as time passing does;
// stepWall() moves only the wall clock, as an NTP step or an operator's `date -s` does, so tests
// can show that nothing judged on monotonic time notices.
//
// Waits: with Waits::Advance (the default) waitFor() returns at once, after advancing both clocks
// by the duration, so loops that back off run without sleeping and tests assert the schedule
// (waits()). With Waits::Block waitFor() blocks until advance() has moved monotonic time to its
// deadline (true) or `stop` is requested (false), for tests that drive threads step by step.
//
// Thread-safety: every member function may be called from any thread; one mutex guards all state.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <stop_token>
#include <vector>

#include "restarter/base/clock.hpp"

namespace restarter::testing {

class FakeClock final : public base::Clock {
 public:
  enum class Waits { Advance, Block };

  // 2027-01-15T08:00:00Z: far from the epoch, so "zero" time points never look recent.
  static constexpr WallTime kWallStart = WallTime(std::chrono::seconds(1'800'000'000));
  static constexpr MonotonicTime kMonotonicStart = MonotonicTime(std::chrono::hours(1000));

  explicit FakeClock(Waits waits = Waits::Advance, WallTime wallStart = kWallStart)
      : waitsMode_(waits), wall_(wallStart) {}

  WallTime wallNow() const override {
    std::lock_guard lock(mutex_);
    return wall_;
  }
  MonotonicTime monotonicNow() const override {
    std::lock_guard lock(mutex_);
    return monotonic_;
  }

  bool waitFor(std::chrono::milliseconds duration, std::stop_token stop) override {
    std::unique_lock lock(mutex_);
    waits_.push_back(duration);
    if (waitsMode_ == Waits::Advance) {
      wall_ += duration;
      monotonic_ += duration;
      changed_.notify_all();
      return !stop.stop_requested();
    }
    const MonotonicTime deadline = monotonic_ + duration;
    ++blocked_;
    changed_.notify_all();
    const bool reached = changed_.wait(lock, stop, [&] { return monotonic_ >= deadline; });
    --blocked_;
    return reached && !stop.stop_requested();
  }

  // Time passes: both clocks move by `by`; blocked waits whose deadline is reached return.
  void advance(std::chrono::nanoseconds by) {
    std::lock_guard lock(mutex_);
    wall_ += std::chrono::duration_cast<WallTime::duration>(by);
    monotonic_ += std::chrono::duration_cast<MonotonicTime::duration>(by);
    changed_.notify_all();
  }
  // The wall clock jumps by `by` (forward or back); monotonic time does not move.
  void stepWall(std::chrono::nanoseconds by) {
    std::lock_guard lock(mutex_);
    wall_ += std::chrono::duration_cast<WallTime::duration>(by);
  }

  // Every duration waitFor() was asked for, in order.
  std::vector<std::chrono::milliseconds> waits() const {
    std::lock_guard lock(mutex_);
    return waits_;
  }
  // Blocks until at least `count` waitFor() calls are blocked (Waits::Block), so a test advances
  // only once the thread it drives is waiting.
  void awaitBlocked(std::size_t count) const {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return blocked_ >= count; });
  }

 private:
  const Waits waitsMode_;
  mutable std::mutex mutex_;
  mutable std::condition_variable_any changed_;
  WallTime wall_;
  MonotonicTime monotonic_ = kMonotonicStart;
  std::vector<std::chrono::milliseconds> waits_;
  std::size_t blocked_ = 0;
};

}  // namespace restarter::testing
