#include "restarter/base/token_bucket.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace restarter::base {

TokenBucket::TokenBucket(double rate, double burst, Clock::MonotonicTime start)
    : rate_(std::max(rate, 1e-9)), burst_(std::max(burst, 1.0)), tokens_(burst_), last_(start) {}

void TokenBucket::refill(Clock::MonotonicTime now) {
  if (now <= last_) return;
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
  last_ = now;
}

std::chrono::milliseconds TokenBucket::debtDuration() const {
  if (tokens_ >= 0.0) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(-tokens_ / rate_ * 1000.0)));
}

}  // namespace restarter::base
