#include "restarter/base/clock.hpp"

#include <condition_variable>
#include <mutex>

namespace restarter::base {
namespace {

class SystemClock final : public Clock {
 public:
  WallTime wallNow() const override { return std::chrono::system_clock::now(); }
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }

  bool waitFor(std::chrono::milliseconds duration, std::stop_token stop) override {
    std::mutex mutex;
    std::condition_variable_any cv;
    std::unique_lock lock(mutex);
    // condition_variable_any wakes on stop requests by itself; wait_for measures on steady_clock.
    cv.wait_for(lock, stop, duration, [] { return false; });
    return !stop.stop_requested();
  }
};

}  // namespace

Clock& systemClock() {
  static SystemClock clock;
  return clock;
}

}  // namespace restarter::base
