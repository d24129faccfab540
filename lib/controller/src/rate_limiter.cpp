#include "restarter/controller/rate_limiter.hpp"

namespace restarter::controller {

RateLimiter::RateLimiter(base::Clock& clock, double rate, double burst)
    : clock_(clock), bucket_(rate, burst, clock.monotonicNow()) {}

std::chrono::milliseconds RateLimiter::reserve() {
  std::lock_guard lock(mutex_);
  bucket_.refill(clock_.monotonicNow());
  bucket_.spend(1.0);
  return bucket_.debtDuration();
}

bool RateLimiter::acquire(std::stop_token stop) {
  const std::chrono::milliseconds wait = reserve();
  if (wait.count() <= 0) return !stop.stop_requested();
  return clock_.waitFor(wait, stop);
}

}  // namespace restarter::controller
