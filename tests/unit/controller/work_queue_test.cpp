#include "restarter/controller/work_queue.hpp"

#include <thread>

#include <catch2/catch.hpp>

#include "../kube/fakes.hpp"

using namespace restarter::controller;
using restarter::kube::testing::FakeClock;
using namespace std::chrono_literals;

namespace {
restarter::cache::BackoffPolicy policy() { return {100ms, 1000ms, 0.0}; }
}  // namespace

TEST_CASE("a key added many times is handed out once", "[controller][queue]") {
  FakeClock clock;
  WorkQueue queue(clock, policy(), [] { return 0.0; });
  queue.add("a");
  queue.add("a");
  queue.add("b");
  CHECK(queue.depth() == 2);
  auto first = queue.tryGet(clock.now());
  auto second = queue.tryGet(clock.now());
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*first != *second);
  CHECK_FALSE(queue.tryGet(clock.now()));
}

TEST_CASE("the debounce window starts at the first change and coalesces the burst", "[controller][queue]") {
  FakeClock clock;
  WorkQueue queue(clock, policy(), [] { return 0.0; });
  queue.add("sts", 1000ms);
  clock.advance(400ms);
  queue.add("sts", 1000ms);  // does not push the due time back
  clock.advance(500ms);
  CHECK_FALSE(queue.tryGet(clock.now()));
  REQUIRE(queue.nextDue());
  CHECK(*queue.nextDue() - clock.now() == 100ms);
  clock.advance(100ms);
  CHECK(queue.tryGet(clock.now()) == std::optional<std::string>("sts"));
  CHECK_FALSE(queue.tryGet(clock.now() + 10s));
}

TEST_CASE("a key added while it is processed comes back after done", "[controller][queue]") {
  FakeClock clock;
  WorkQueue queue(clock, policy(), [] { return 0.0; });
  queue.add("a");
  auto key = queue.tryGet(clock.now());
  REQUIRE(key);
  queue.add("a");
  CHECK_FALSE(queue.tryGet(clock.now()));  // never to two workers at once
  queue.done("a");
  CHECK(queue.tryGet(clock.now()) == std::optional<std::string>("a"));
  queue.done("a");
  CHECK(queue.depth() == 0);
}

TEST_CASE("errors back off exponentially and forget resets", "[controller][queue]") {
  FakeClock clock;
  WorkQueue queue(clock, policy(), [] { return 0.0; });
  CHECK(queue.addRateLimited("a") == 100ms);
  CHECK(queue.addRateLimited("a") == 200ms);
  CHECK(queue.addRateLimited("a") == 400ms);
  CHECK(queue.failures("a") == 3);
  CHECK(queue.addRateLimited("b", 5000ms) == 5000ms);  // Retry-After wins when longer
  queue.forget("a");
  CHECK(queue.failures("a") == 0);
  CHECK(queue.addRateLimited("a") == 100ms);
}

TEST_CASE("backoff jitter draws from the lower half of the window", "[controller][queue]") {
  FakeClock clock;
  WorkQueue queue(clock, {100ms, 1000ms, 0.5}, [] { return 0.0; });
  CHECK(queue.addRateLimited("a") == 50ms);
}

TEST_CASE("get blocks until a key is due and shutDown releases it", "[controller][queue]") {
  WorkQueue queue(restarter::kube::systemClock(), policy());
  std::jthread producer([&] {
    std::this_thread::sleep_for(20ms);
    queue.add("late", 10ms);
  });
  CHECK(queue.get({}) == std::optional<std::string>("late"));
  queue.done("late");
  std::jthread closer([&] {
    std::this_thread::sleep_for(20ms);
    queue.shutDown();
  });
  CHECK_FALSE(queue.get({}));
}

TEST_CASE("the token bucket lets a burst through then spaces writes", "[controller][queue]") {
  FakeClock clock;
  TokenBucket bucket(clock, 10.0, 2.0);
  CHECK(bucket.reserve() == 0ms);
  CHECK(bucket.reserve() == 0ms);
  CHECK(bucket.reserve() == 100ms);
  CHECK(bucket.reserve() == 200ms);  // reservations queue up behind each other
  clock.advance(1000ms);
  CHECK(bucket.reserve() == 0ms);
}
