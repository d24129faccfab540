#include "restarter/core/time.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono;

TEST_CASE("durations parse Go style with milliseconds and days for certificate lifetimes", "[time]") {
  struct Row {
    const char* text;
    milliseconds value;
  };
  const std::vector<Row> rows = {
      {"0", 0ms},     {"0s", 0ms},      {"250ms", 250ms},        {"90s", 90s},
      {"15m", 15min}, {"24h", 24h},     {"1h30m", 90min},        {"30d", 720h},
      {"1d12h", 36h}, {"8760h", 8760h}, {"1m30s500ms", 90500ms}, {"2m5ms", 120005ms}};
  for (const Row& row : rows) {
    INFO(row.text);
    auto parsed = parseDuration(row.text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == row.value);
  }
  for (const char* bad : {"", "10", "h", "ms", "-5m", "1.5h", "5w", "10 m", "5mss", "00", "1sm",
                          "99999999999999999999h", "9223372036854775807ms1ms", "4611686018427388s"}) {
    INFO(bad);
    auto parsed = parseDuration(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().kind == ErrorKind::InvalidInput);
  }
}

TEST_CASE("durations are checked against a flag's bounds", "[time]") {
  CHECK(*parseDurationWithin("2s", {.min = 1ms}) == 2s);
  CHECK(parseDurationWithin("0s", {.min = 1ms}).error().message == "must be more than 0");
  CHECK(parseDurationWithin("0", {.min = 1s}).error().message == "must be at least 1s");
  CHECK(*parseDurationWithin("1h", {.max = 1h}) == 1h);
  CHECK(parseDurationWithin("61m", {.max = 1h}).error().message == "must be at most 1h");
  CHECK(*parseDurationWithin("3s", {.wholeSeconds = true}) == 3s);
  CHECK(parseDurationWithin("1500ms", {.wholeSeconds = true}).error().message ==
        "must be whole seconds, not \"1500ms\"");
  CHECK(parseDurationWithin("1.5s", {}).error().kind == ErrorKind::InvalidInput);
}

TEST_CASE("durations format in the largest exact units", "[time]") {
  CHECK(formatDuration(1500ms) == "1500ms");
  // Seconds are formatted as seconds: as milliseconds the largest would overflow.
  CHECK(formatDuration(seconds::max()) == "2562047788015215h30m7s");
  CHECK(formatDuration(48h) == "48h");
  CHECK(formatDuration(-1s) == "0s");
  for (const milliseconds value : {250ms, milliseconds(90s), milliseconds(90min), milliseconds(49h), 61001ms}) {
    INFO(value.count());
    CHECK(*parseDuration(formatDuration(value)) == value);  // what it writes reads back
  }
  CHECK(formatDuration(seconds{0}) == "0s");
  CHECK(formatDuration(seconds{86400}) == "24h");
  CHECK(formatDuration(seconds{5400}) == "1h30m");
  CHECK(formatDuration(seconds{3661}) == "1h1m1s");
  CHECK(formatDuration(seconds{45}) == "45s");
}
