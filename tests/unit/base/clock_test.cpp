#include "restarter/base/clock.hpp"

#include <catch2/catch.hpp>

#include <thread>

#include "restarter/testing/fake_clock.hpp"

using restarter::base::systemClock;
using restarter::testing::FakeClock;
using namespace std::chrono_literals;

TEST_CASE("the system clock waits and wakes when stopped", "[clock]") {
  auto& clock = systemClock();
  const auto before = clock.monotonicNow();
  std::stop_source running;
  CHECK(clock.waitFor(5ms, running.get_token()));
  CHECK(clock.monotonicNow() - before >= 5ms);
  std::stop_source stopped;
  stopped.request_stop();
  CHECK_FALSE(clock.waitFor(1h, stopped.get_token()));
}

TEST_CASE("a fake clock steps its wall time without moving its monotonic time", "[clock]") {
  FakeClock clock;
  const auto wall = clock.wallNow();
  const auto monotonic = clock.monotonicNow();
  clock.stepWall(1h);
  CHECK(clock.wallNow() - wall == 1h);
  CHECK(clock.monotonicNow() == monotonic);
  clock.stepWall(-2h);
  CHECK(clock.wallNow() - wall == -1h);
  clock.advance(3s);
  CHECK(clock.wallNow() - wall == -1h + 3s);
  CHECK(clock.monotonicNow() - monotonic == 3s);
}

TEST_CASE("a fake clock's waits advance it by default", "[clock]") {
  FakeClock clock;
  const auto monotonic = clock.monotonicNow();
  std::stop_source running;
  CHECK(clock.waitFor(2s, running.get_token()));
  CHECK(clock.waitFor(500ms, running.get_token()));
  CHECK(clock.monotonicNow() - monotonic == 2500ms);
  CHECK(clock.waits() == std::vector<std::chrono::milliseconds>{2s, 500ms});
}

TEST_CASE("a blocking fake clock's wait returns once advanced to its deadline or stopped", "[clock]") {
  FakeClock clock(FakeClock::Waits::Block);
  std::stop_source running;
  bool result = false;
  std::thread waiter([&] { result = clock.waitFor(10s, running.get_token()); });
  clock.awaitBlocked(1);
  clock.stepWall(1h);  // the wall clock jumping does not end a wait
  clock.advance(9s);
  clock.awaitBlocked(1);
  clock.advance(1s);
  waiter.join();
  CHECK(result);

  std::stop_source stop;
  std::thread stopped([&] { result = clock.waitFor(10s, stop.get_token()); });
  clock.awaitBlocked(1);
  stop.request_stop();
  stopped.join();
  CHECK_FALSE(result);
}
