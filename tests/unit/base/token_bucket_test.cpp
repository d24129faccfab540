#include "restarter/base/token_bucket.hpp"

#include <catch2/catch.hpp>

using restarter::base::Clock;
using restarter::base::TokenBucket;
using namespace std::chrono_literals;

TEST_CASE("a token bucket starts full and refills at its rate up to its burst", "[token_bucket]") {
  const Clock::MonotonicTime start{};
  TokenBucket bucket(10.0, 4.0, start);
  CHECK(bucket.tokens() == 4.0);
  bucket.spend(4.0);
  CHECK(bucket.tokens() == 0.0);
  bucket.refill(start + 200ms);
  CHECK(bucket.tokens() == Approx(2.0));
  bucket.refill(start + 10s);  // never above the burst
  CHECK(bucket.tokens() == 4.0);
}

TEST_CASE("a token bucket ignores time that runs back", "[token_bucket]") {
  const Clock::MonotonicTime start = Clock::MonotonicTime{} + 1h;
  TokenBucket bucket(1.0, 2.0, start);
  bucket.spend(2.0);
  bucket.refill(start - 30min);  // adds nothing, and the later refill counts from `start`
  CHECK(bucket.tokens() == 0.0);
  bucket.refill(start + 1s);
  CHECK(bucket.tokens() == Approx(1.0));
}

TEST_CASE("a token bucket covers a spend only down to the floor asked for", "[token_bucket]") {
  TokenBucket bucket(1.0, 10.0, Clock::MonotonicTime{});
  CHECK(bucket.covers(10.0));
  CHECK_FALSE(bucket.covers(10.0, 1.0));
  CHECK(bucket.covers(9.0, 1.0));
  CHECK_FALSE(bucket.covers(11.0));
}

TEST_CASE("a token bucket in debt says how long it takes to repay", "[token_bucket]") {
  const Clock::MonotonicTime start{};
  TokenBucket bucket(10.0, 1.0, start);
  CHECK(bucket.debtDuration() == 0ms);
  bucket.spend(1.0);
  CHECK(bucket.debtDuration() == 0ms);
  bucket.spend(1.0);
  CHECK(bucket.debtDuration() == 100ms);
  bucket.spend(1.5);
  CHECK(bucket.debtDuration() == 250ms);
  bucket.refill(start + 250ms);
  CHECK(bucket.debtDuration() == 0ms);
}

TEST_CASE("a token bucket's rate and burst have floors", "[token_bucket]") {
  TokenBucket bucket(0.0, 0.0, Clock::MonotonicTime{});
  CHECK(bucket.burst() == 1.0);
  bucket.spend(2.0);
  CHECK(bucket.debtDuration() > 1h);  // a rate of 1e-9 a second, not a division by zero
}
