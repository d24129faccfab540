#include "restarter/core/expiry.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono;

namespace {

TimePoint utc(int y, unsigned mo, unsigned d, int h, int mi, int s, long long us = 0) {
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s} + microseconds{us};
}

}  // namespace

TEST_CASE("the earliest expires-at wins and decides evict-now or check-at", "[expiry]") {
  const AnnotationMap annotations = {
      {"restarter.stackable.tech/expires-at.tls", "2030-01-01T12:00:00Z"},
      {"restarter.stackable.tech/expires-at.kerberos", "2030-01-01T13:00:00+02:00"},
      {"restarter.stackable.tech/expires-at.bad", "soon"},
      {"other/expires-at.x", "2000-01-01T00:00:00Z"},
  };
  const TimePoint earliest = utc(2030, 1, 1, 11, 0, 0);

  SECTION("before the time: check again then") {
    const auto decision = decideExpiry(annotations, utc(2029, 12, 31, 0, 0, 0));
    CHECK(decision.action == ExpiryDecision::Action::CheckAt);
    CHECK(decision.expiresAt == earliest);
    CHECK(decision.key == "restarter.stackable.tech/expires-at.kerberos");
  }
  SECTION("exactly at the time: evict") {
    CHECK(decideExpiry(annotations, earliest).action == ExpiryDecision::Action::EvictNow);
  }
  SECTION("after the time: evict") {
    CHECK(decideExpiry(annotations, earliest + seconds{1}).action == ExpiryDecision::Action::EvictNow);
  }
  SECTION("an unparseable value is reported, not fatal") {
    const auto decision = decideExpiry(annotations, TimePoint{});
    REQUIRE(decision.problems.size() == 1);
    CHECK(decision.problems[0].key == "restarter.stackable.tech/expires-at.bad");
    CHECK(decision.problems[0].value == "soon");
    CHECK_THAT(decision.problems[0].reason, Catch::Contains("RFC 3339"));
  }
}

TEST_CASE("no valid expires-at means nothing to do", "[expiry]") {
  CHECK(decideExpiry({}, TimePoint{}).action == ExpiryDecision::Action::None);
  const auto onlyBad = decideExpiry({{"restarter.stackable.tech/expires-at.x", "never"}}, TimePoint{});
  CHECK(onlyBad.action == ExpiryDecision::Action::None);
  CHECK_FALSE(onlyBad.expiresAt);
  CHECK(onlyBad.problems.size() == 1);
}
