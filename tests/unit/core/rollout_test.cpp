#include "restarter/core/rollout.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

TimePoint at(std::chrono::microseconds offset) {
  return TimePoint(std::chrono::seconds(1'800'000'000)) + offset;
}

json stamped(json value) {
  return {{"metadata", {{"name", "web"}, {"annotations", {{"restarter.stackable.tech/last-rollout", value}}}}}};
}

}  // namespace

TEST_CASE("rollout: a workload rolls at once without an interval or without a record", "[rollout]") {
  CHECK(decideRollout(at(0s), at(0s), 0ms).rollNow);
  CHECK(decideRollout(at(0s), at(0s), -5ms).rollNow);
  CHECK(decideRollout(std::nullopt, at(0s), 20s).rollNow);
}

TEST_CASE("rollout: the interval holds until its end and the end itself may roll", "[rollout]") {
  const auto justRolled = decideRollout(at(0s), at(0s), 20s);
  CHECK_FALSE(justRolled.rollNow);
  CHECK(justRolled.notBefore == at(20s));
  const auto lastMicrosecond = decideRollout(at(0s), at(20s - 1us), 20s);
  CHECK_FALSE(lastMicrosecond.rollNow);
  CHECK(lastMicrosecond.notBefore == at(20s));
  CHECK(decideRollout(at(0s), at(20s), 20s).rollNow);
  CHECK(decideRollout(at(0s), at(1h), 20s).rollNow);
  // Milliseconds count: a 1.5 s interval ends 1.5 s after the rollout.
  CHECK(decideRollout(at(0s), at(1499ms), 1500ms).notBefore == at(1500ms));
  CHECK(decideRollout(at(0s), at(1500ms), 1500ms).rollNow);
}

TEST_CASE("rollout: a record up to one interval in the future holds and a later one is ignored", "[rollout]") {
  // Another replica's clock runs ahead: its stamp is in our future, and the hold ends an interval
  // after it (at most two intervals from now).
  const auto ahead = decideRollout(at(20s), at(0s), 20s);
  CHECK_FALSE(ahead.rollNow);
  CHECK(ahead.notBefore == at(40s));
  // More than an interval ahead is no clock skew (a hand edit): it must not hold the workload.
  const auto beyond = decideRollout(at(20s + 1us), at(0s), 20s);
  CHECK(beyond.rollNow);
  CHECK_THAT(beyond.reason, Catch::Contains("future"));
}

TEST_CASE("rollout: the record is read from the workload metadata annotation", "[rollout]") {
  CHECK(lastRolloutOf(stamped("2027-01-15T08:00:00Z")) == parseRfc3339("2027-01-15T08:00:00Z").value());
  CHECK(lastRolloutOf(stamped("2027-01-15T08:00:00.250000Z")) ==
        parseRfc3339("2027-01-15T08:00:00.25Z").value());
  CHECK_FALSE(lastRolloutOf(stamped("yesterday")));
  CHECK_FALSE(lastRolloutOf(stamped(42)));
  CHECK_FALSE(lastRolloutOf(json{{"metadata", {{"name", "web"}}}}));
  CHECK_FALSE(lastRolloutOf(json{{"metadata", {{"annotations", "x"}}}}));
  CHECK_FALSE(lastRolloutOf(json{{"metadata", 1}}));
  CHECK_FALSE(lastRolloutOf(json::array()));
}

TEST_CASE("rollout: intervals are shown in the largest exact units", "[rollout]") {
  CHECK(formatInterval(5min) == "5m");
  CHECK(formatInterval(20s) == "20s");
  CHECK(formatInterval(90min) == "1h30m");
  CHECK(formatInterval(1500ms) == "1500ms");
  CHECK(formatInterval(0ms) == "0s");
}

TEST_CASE("rollout: the held note names its end and reads back", "[rollout]") {
  const TimePoint until = at(20s + 250ms);
  const std::string note = rolloutHeldNote(until, at(250ms), 20s, "shop",
                                           "configmap/a: u/1 -> u/2 (updated); secret/b: none -> v/1 (added)");
  CHECK(note.rfind("Rollout held until ", 0) == 0);
  CHECK_THAT(note, Catch::Contains("at most one rollout per 20s") && Catch::Contains("namespace shop") &&
                       Catch::Contains("configmap/a: u/1 -> u/2 (updated); secret/b"));
  CHECK(heldUntilFromNote(note) == until);
  CHECK_FALSE(heldUntilFromNote("Restarting pods: referenced objects changed"));
  CHECK_FALSE(heldUntilFromNote("Rollout held until later; at most one rollout per 20s"));
  CHECK_FALSE(heldUntilFromNote(""));
}
