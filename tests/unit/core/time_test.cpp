#include "restarter/core/time.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono;

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
