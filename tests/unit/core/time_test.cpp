#include "restarter/core/time.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono;

namespace {

TimePoint utc(int y, unsigned mo, unsigned d, int h, int mi, int s, long long us = 0) {
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s} + microseconds{us};
}

}  // namespace

TEST_CASE("RFC 3339 times parse with and without fractions and offsets", "[expiry]") {
  struct Row {
    const char* text;
    TimePoint expected;
  };
  const std::vector<Row> rows = {
      {"2022-04-21T13:24:15Z", utc(2022, 4, 21, 13, 24, 15)},
      {"2022-04-21t13:24:15z", utc(2022, 4, 21, 13, 24, 15)},
      {"2022-04-21T13:24:15.225774724+00:00", utc(2022, 4, 21, 13, 24, 15, 225774)},
      {"2022-04-21T13:24:15.5Z", utc(2022, 4, 21, 13, 24, 15, 500000)},
      {"2022-04-21T15:24:15+02:00", utc(2022, 4, 21, 13, 24, 15)},
      {"2022-04-21T08:54:15-04:30", utc(2022, 4, 21, 13, 24, 15)},
      {"2022-04-21T00:30:00+01:00", utc(2022, 4, 20, 23, 30, 0)},
      {"2024-02-29T00:00:00Z", utc(2024, 2, 29, 0, 0, 0)},
      {"2016-12-31T23:59:60Z", utc(2017, 1, 1, 0, 0, 0)},
      {"9999-12-31T23:59:59Z", utc(9999, 12, 31, 23, 59, 59)},
      {"1970-01-01T00:00:00Z", TimePoint{}},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    auto parsed = parseRfc3339(row.text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == row.expected);
  }
}

TEST_CASE("anything that is not RFC 3339 is an error value", "[expiry]") {
  for (const char* bad :
       {"", "2022-04-21", "2022-04-21T13:24:15", "2022-04-21 13:24:15Z", "2022-4-21T13:24:15Z",
        "2022-04-21T13:24Z", "2022-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2022-04-31T00:00:00Z",
        "2022-04-21T24:00:00Z", "2022-04-21T23:60:00Z", "2022-04-21T23:59:61Z", "2022-04-21T13:24:15.Z",
        "2022-04-21T13:24:15+0200", "2022-04-21T13:24:15+24:00", "2022-04-21T13:24:15Zjunk", "tomorrow",
        "２０２２-04-21T13:24:15Z", "1651234567"}) {
    INFO(bad);
    auto parsed = parseRfc3339(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().kind == ErrorKind::InvalidInput);
  }
  const std::string huge(1 << 20, '9');
  CHECK_FALSE(parseRfc3339(huge).ok());
  CHECK(parseRfc3339("2022-04-21T13:24:15." + huge + "Z").ok());  // any number of digits
}

TEST_CASE("formatting is UTC and round-trips", "[expiry]") {
  CHECK(formatRfc3339(utc(2022, 4, 21, 13, 24, 15)) == "2022-04-21T13:24:15Z");
  CHECK(formatRfc3339(utc(2022, 4, 21, 13, 24, 15, 225774)) == "2022-04-21T13:24:15.225774Z");
  const TimePoint t = utc(2031, 7, 9, 1, 2, 3, 4);
  CHECK(*parseRfc3339(formatRfc3339(t)) == t);
}

TEST_CASE("durations parse Go style with days for certificate lifetimes", "[time]") {
  struct Row {
    const char* text;
    long long seconds;
  };
  const std::vector<Row> rows = {{"0s", 0},       {"90s", 90},      {"15m", 900},      {"24h", 86400},
                                 {"1h30m", 5400}, {"30d", 2592000}, {"1d12h", 129600}, {"8760h", 31536000}};
  for (const Row& row : rows) {
    INFO(row.text);
    auto parsed = parseDuration(row.text);
    REQUIRE(parsed.ok());
    CHECK(parsed->count() == row.seconds);
  }
  for (const char* bad :
       {"", "10", "h", "-5m", "1.5h", "5w", "10 m", "99999999999999999999h", "9223372036854775807s1s"}) {
    INFO(bad);
    auto parsed = parseDuration(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().kind == ErrorKind::InvalidInput);
  }
}

TEST_CASE("durations format in the largest exact units", "[time]") {
  CHECK(formatDuration(seconds{0}) == "0s");
  CHECK(formatDuration(seconds{86400}) == "24h");
  CHECK(formatDuration(seconds{5400}) == "1h30m");
  CHECK(formatDuration(seconds{3661}) == "1h1m1s");
  CHECK(formatDuration(seconds{45}) == "45s");
}
