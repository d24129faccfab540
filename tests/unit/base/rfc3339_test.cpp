#include "restarter/base/rfc3339.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace restarter::base;
using namespace std::chrono;

namespace {

WallMicros utc(int y, unsigned mo, unsigned d, int h, int mi, int s, long long us = 0) {
  return sys_days{year{y} / month{mo} / day{d}} + hours{h} + minutes{mi} + seconds{s} + microseconds{us};
}

}  // namespace

TEST_CASE("RFC 3339 times parse with and without fractions and offsets", "[expiry]") {
  struct Row {
    const char* text;
    WallMicros expected;
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
      {"1970-01-01T00:00:00Z", WallMicros{}},
  };
  for (const Row& row : rows) {
    INFO(row.text);
    auto parsed = parseRfc3339(row.text);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == row.expected);
  }
}

TEST_CASE("anything that is not RFC 3339 is refused with the reason", "[expiry]") {
  for (const char* bad :
       {"", "2022-04-21", "2022-04-21T13:24:15", "2022-04-21 13:24:15Z", "2022-4-21T13:24:15Z",
        "2022-04-21T13:24Z", "2022-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2022-04-31T00:00:00Z",
        "2022-04-21T24:00:00Z", "2022-04-21T23:60:00Z", "2022-04-21T23:59:61Z", "2022-04-21T13:24:15.Z",
        "2022-04-21T13:24:15+0200", "2022-04-21T13:24:15+24:00", "2022-04-21T13:24:15Zjunk", "tomorrow",
        "２０２２-04-21T13:24:15Z", "1651234567"}) {
    INFO(bad);
    std::string problem;
    auto parsed = parseRfc3339(bad, &problem);
    REQUIRE_FALSE(parsed.has_value());
    CHECK(problem.rfind("not an RFC 3339 time (", 0) == 0);
  }
  const std::string huge(1 << 20, '9');
  CHECK_FALSE(parseRfc3339(huge).has_value());
  CHECK(parseRfc3339("2022-04-21T13:24:15." + huge + "Z").has_value());  // any number of digits
}

TEST_CASE("formatting is UTC and round-trips", "[expiry]") {
  CHECK(formatRfc3339(utc(2022, 4, 21, 13, 24, 15)) == "2022-04-21T13:24:15Z");
  CHECK(formatRfc3339(utc(2022, 4, 21, 13, 24, 15, 225774)) == "2022-04-21T13:24:15.225774Z");
  const WallMicros t = utc(2031, 7, 9, 1, 2, 3, 4);
  CHECK(*parseRfc3339(formatRfc3339(t)) == t);
}

TEST_CASE("metav1.MicroTime always carries six fraction digits", "[time]") {
  CHECK(formatRfc3339(utc(2022, 4, 21, 13, 24, 15), Fraction::Micros) == "2022-04-21T13:24:15.000000Z");
  CHECK(formatRfc3339(utc(2022, 4, 21, 13, 24, 15, 5), Fraction::Micros) == "2022-04-21T13:24:15.000005Z");
}
