#pragma once
// RateLimiter: a base::TokenBucket that callers wait on (Wave's lesson: a flapping object must not
// overwhelm the apiserver). The controller's global write limit and its reads of unloaded
// referenced objects (docs/architecture.md, "Memory that follows references") each hold one: every
// request takes a token; `rate` tokens come back per second of monotonic time (the clock seam,
// docs/architecture.md, "Injected time") up to `burst`.
//
// Thread-safety: every member function may be called from any thread (one mutex guards the bucket).

#include <chrono>
#include <mutex>
#include <stop_token>

#include "restarter/base/clock.hpp"
#include "restarter/base/token_bucket.hpp"

namespace restarter::controller {

class RateLimiter {
 public:
  // `rate` tokens per second (> 0), at most `burst` (>= 1) saved up; starts full. `clock` must
  // outlive the limiter.
  RateLimiter(base::Clock& clock, double rate, double burst);

  // Takes a token; returns how long the caller must wait before using it (0 when one was there).
  // Tokens are reserved in order, so concurrent callers are spaced out, never all let through.
  std::chrono::milliseconds reserve();
  // reserve(), then waits on the clock. False if `stop` was requested while waiting.
  bool acquire(std::stop_token stop);

 private:
  base::Clock& clock_;
  std::mutex mutex_;
  base::TokenBucket bucket_;  // guarded by mutex_
};

}  // namespace restarter::controller
