#include "restarter/runtime/trim_schedule.hpp"

#include <catch2/catch.hpp>

using restarter::runtime::TrimSchedule;
using namespace std::chrono_literals;

namespace {

constexpr auto kQuiet = 2s;
constexpr auto kPeriod = 60s;
const TrimSchedule::Clock::time_point kStart{};

}  // namespace

TEST_CASE("trim schedule: nothing before the caches sync until the period has passed", "[trim]") {
  TrimSchedule schedule(kQuiet, kPeriod, kStart);
  CHECK_FALSE(schedule.due(false, 0, kStart + 1s));
  CHECK_FALSE(schedule.due(false, 5, kStart + 10s));
  CHECK_FALSE(schedule.due(false, 5, kStart + 59s));
  CHECK(schedule.due(false, 5, kStart + 60s));
  CHECK_FALSE(schedule.due(false, 5, kStart + 61s));
}

TEST_CASE("trim schedule: once when the caches have synced", "[trim]") {
  TrimSchedule schedule(kQuiet, kPeriod, kStart);
  CHECK(schedule.due(true, 0, kStart + 1s));
  CHECK_FALSE(schedule.due(true, 0, kStart + 2s));
  CHECK_FALSE(schedule.due(true, 0, kStart + 30s));
}

TEST_CASE("trim schedule: again once a burst of work has been quiet for the quiet time", "[trim]") {
  TrimSchedule schedule(kQuiet, kPeriod, kStart);
  REQUIRE(schedule.due(true, 0, kStart + 1s));
  // The burst: the counter moves on every tick.
  CHECK_FALSE(schedule.due(true, 100, kStart + 1200ms));
  CHECK_FALSE(schedule.due(true, 400, kStart + 2s));
  CHECK_FALSE(schedule.due(true, 1000, kStart + 3s));
  // Still, but not yet for the quiet time.
  CHECK_FALSE(schedule.due(true, 1000, kStart + 4s));
  CHECK(schedule.due(true, 1000, kStart + 5s));
  // Done for this burst: nothing more until work happens again.
  CHECK_FALSE(schedule.due(true, 1000, kStart + 6s));
  CHECK_FALSE(schedule.due(true, 1000, kStart + 20s));
  CHECK_FALSE(schedule.due(true, 1001, kStart + 21s));
  CHECK(schedule.due(true, 1001, kStart + 23s));
}

TEST_CASE("trim schedule: the period applies even while work never stops", "[trim]") {
  TrimSchedule schedule(kQuiet, kPeriod, kStart);
  REQUIRE(schedule.due(true, 0, kStart));
  std::uint64_t work = 0;
  int trims = 0;
  for (auto t = kStart + 1s; t <= kStart + 120s; t += 1s) {
    if (schedule.due(true, ++work, t)) ++trims;
  }
  CHECK(trims == 2);
}
