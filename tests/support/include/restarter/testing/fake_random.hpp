#pragma once
// A base::Random that answers a fixed value (default 0: no jitter), settable from the test.
// Thread-safe, as base::Random's contract asks: the value is an atomic.

#include <atomic>

#include "restarter/base/random.hpp"

namespace restarter::testing {

class FakeRandom final : public base::Random {
 public:
  explicit FakeRandom(double value = 0.0) : value_(value) {}
  double uniform() override { return value_.load(); }
  void set(double value) { value_.store(value); }

 private:
  std::atomic<double> value_;
};

}  // namespace restarter::testing
