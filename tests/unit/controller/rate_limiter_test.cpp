#include "restarter/controller/rate_limiter.hpp"

#include <stop_token>

#include <catch2/catch.hpp>

#include "restarter/testing/fake_clock.hpp"

using restarter::controller::RateLimiter;
using restarter::testing::FakeClock;
using namespace std::chrono_literals;

TEST_CASE("the rate limiter lets a burst through then spaces requests", "[controller][rate_limiter]") {
  FakeClock clock;
  RateLimiter limiter(clock, 10.0, 2.0);
  CHECK(limiter.reserve() == 0ms);
  CHECK(limiter.reserve() == 0ms);
  CHECK(limiter.reserve() == 100ms);
  CHECK(limiter.reserve() == 200ms);  // reservations queue up behind each other
  clock.advance(1000ms);
  CHECK(limiter.reserve() == 0ms);
}

TEST_CASE("the rate limiter waits on its clock and gives up when stopped", "[controller][rate_limiter]") {
  FakeClock clock;
  RateLimiter limiter(clock, 10.0, 1.0);
  const auto start = clock.monotonicNow();
  std::stop_source running;
  CHECK(limiter.acquire(running.get_token()));
  CHECK(limiter.acquire(running.get_token()));  // waited 100 ms of the fake clock
  CHECK(clock.monotonicNow() - start >= 100ms);
  std::stop_source stopped;
  stopped.request_stop();
  CHECK_FALSE(limiter.acquire(stopped.get_token()));
}
