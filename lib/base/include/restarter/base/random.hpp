#pragma once
// The randomness seam, beside the clock (base/clock.hpp): jitter for backoff delays comes from an
// injected Random, so tests fix it and production shares one thread-safe source.
//
// Contract: every implementation is thread-safe (uniform() may be called from any number of threads
// at once). The work queue's workers and the reflectors' threads share systemRandom(); an engine
// such as std::mt19937 is not safe to share unguarded, which is why this is an interface with a
// stated contract rather than a std::function each user seeds (and guards) on its own.

namespace restarter::base {

class Random {
 public:
  virtual ~Random() = default;
  // A value in [0, 1).
  virtual double uniform() = 0;
};

// The process-wide source: one std::mt19937_64 seeded from std::random_device, behind a mutex.
Random& systemRandom();

}  // namespace restarter::base
