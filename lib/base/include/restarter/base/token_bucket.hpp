#pragma once
// TokenBucket: the one token bucket (docs/architecture.md, "Injected time"): `rate` tokens a
// second accrue up to `burst`; a caller spends them. Its arithmetic only, on the clock seam's
// monotonic time (clock.hpp), so whoever holds one decides how to wait and how to lock:
// controller::RateLimiter (the write limiter and the reference loads: waits for its token) and
// webhook::LookupBudget (a review's lookups: takes them all at once or refuses) are built on it.
//
// Not thread-safe: its owner locks around it.

#include <chrono>

#include "restarter/base/clock.hpp"

namespace restarter::base {

class TokenBucket {
 public:
  // `rate` tokens a second (at least 1e-9), at most `burst` (at least 1) saved up; full at `start`.
  TokenBucket(double rate, double burst, Clock::MonotonicTime start);

  // Adds what accrued since the last refill, up to the burst. Time that runs back (an earlier
  // `now`) adds nothing and is not remembered.
  void refill(Clock::MonotonicTime now);
  // The tokens there now (negative while spent in advance), as of the last refill.
  double tokens() const { return tokens_; }
  double burst() const { return burst_; }
  // Whether spending `n` would leave at least `floor`.
  bool covers(double n, double floor = 0.0) const { return tokens_ - n >= floor; }
  // Spends `n`, into debt if there are not as many.
  void spend(double n) { tokens_ -= n; }
  // How long until the bucket is out of debt at its rate: 0 when it is not in debt.
  std::chrono::milliseconds debtDuration() const;

 private:
  double rate_;
  double burst_;
  double tokens_;
  Clock::MonotonicTime last_;
};

}  // namespace restarter::base
