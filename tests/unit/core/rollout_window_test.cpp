#include "restarter/core/rollout_window.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "restarter/base/rfc3339.hpp"

using namespace restarter::core;
using namespace std::chrono_literals;

namespace {

TimePoint at(const char* rfc3339) {
  const auto parsed = restarter::base::parseRfc3339(rfc3339);
  REQUIRE(parsed);
  return *parsed;
}

RolloutSchedule schedule(const char* spec) {
  auto parsed = parseRolloutSchedule(spec);
  INFO(spec << ": " << (parsed ? std::string() : parsed.error().message));
  REQUIRE(parsed);
  return *parsed;
}

std::string opening(const RolloutSchedule& s, const char* now) {
  return restarter::base::formatRfc3339(s.nextOpening(at(now)));
}

}  // namespace

TEST_CASE("rollout window: a window every day in UTC opens at its start and closes at its end", "[window]") {
  const RolloutSchedule s = schedule("02:00-04:00");
  CHECK_FALSE(s.always());
  CHECK_FALSE(s.isOpen(at("2026-12-05T01:59:59.999999Z")));
  CHECK(s.isOpen(at("2026-12-05T02:00:00Z")));
  CHECK(s.isOpen(at("2026-12-05T03:59:59.999999Z")));
  CHECK_FALSE(s.isOpen(at("2026-12-05T04:00:00Z")));
  CHECK(opening(s, "2026-12-05T01:00:00Z") == "2026-12-05T02:00:00Z");
  CHECK(opening(s, "2026-12-05T03:00:00Z") == "2026-12-05T03:00:00Z");  // open: now
  CHECK(opening(s, "2026-12-05T04:00:00Z") == "2026-12-06T02:00:00Z");
}

TEST_CASE("rollout window: always and no window are always open", "[window]") {
  for (const char* spec : {"always", " ALWAYS "}) {
    const RolloutSchedule s = schedule(spec);
    CHECK(s.always());
    CHECK(s.isOpen(at("2026-12-05T12:00:00Z")));
    CHECK(opening(s, "2026-12-05T12:00:00Z") == "2026-12-05T12:00:00Z");
  }
}

TEST_CASE("rollout window: a window across midnight belongs to the day it starts on", "[window]") {
  // 2026-12-04 is a Friday.
  const RolloutSchedule fri = schedule("Fri 22:00-02:00");
  CHECK_FALSE(fri.isOpen(at("2026-12-04T21:59:00Z")));
  CHECK(fri.isOpen(at("2026-12-04T22:00:00Z")));
  CHECK(fri.isOpen(at("2026-12-05T01:59:00Z")));  // Saturday morning: Friday's window
  CHECK_FALSE(fri.isOpen(at("2026-12-05T02:00:00Z")));
  CHECK_FALSE(fri.isOpen(at("2026-12-04T01:00:00Z")));  // Friday morning: Thursday's, not opened
  CHECK(opening(fri, "2026-12-04T01:00:00Z") == "2026-12-04T22:00:00Z");
  const RolloutSchedule sat = schedule("Sat 22:00-02:00");
  CHECK_FALSE(sat.isOpen(at("2026-12-05T01:00:00Z")));  // Saturday morning is Friday's night
  CHECK(opening(sat, "2026-12-05T01:00:00Z") == "2026-12-05T22:00:00Z");
  CHECK(sat.isOpen(at("2026-12-06T01:00:00Z")));
  // An end of 00:00 or 24:00 is the next midnight.
  CHECK(schedule("22:00-00:00").isOpen(at("2026-12-05T23:59:00Z")));
  CHECK(schedule("22:00-24:00").isOpen(at("2026-12-05T23:59:00Z")));
  CHECK(schedule("00:00-24:00").isOpen(at("2026-12-05T00:00:00Z")));
}

TEST_CASE("rollout window: day ranges and lists and wrapping ranges", "[window]") {
  // 2026-12-05 is a Saturday, 2026-12-07 a Monday.
  const RolloutSchedule weekdays = schedule("Mon-Fri 02:00-04:00");
  CHECK_FALSE(weekdays.isOpen(at("2026-12-05T03:00:00Z")));
  CHECK(opening(weekdays, "2026-12-05T03:00:00Z") == "2026-12-07T02:00:00Z");
  CHECK(weekdays.isOpen(at("2026-12-07T03:00:00Z")));
  CHECK(weekdays.isOpen(at("2026-12-11T03:00:00Z")));  // Friday
  const RolloutSchedule weekend = schedule("Sat,Sun 10:00-12:00");
  CHECK(weekend.isOpen(at("2026-12-05T11:00:00Z")));
  CHECK(weekend.isOpen(at("2026-12-06T11:00:00Z")));
  CHECK_FALSE(weekend.isOpen(at("2026-12-07T11:00:00Z")));
  const RolloutSchedule wrap = schedule("Fri-Mon 10:00-12:00");
  for (const char* day : {"2026-12-04", "2026-12-05", "2026-12-06", "2026-12-07"})
    CHECK(wrap.isOpen(at((std::string(day) + "T11:00:00Z").c_str())));
  CHECK_FALSE(wrap.isOpen(at("2026-12-08T11:00:00Z")));
  // Lenient spelling: case, spaces inside the day list and around a range's dash.
  const RolloutSchedule lenient = schedule("sat, SUN 10:00-12:00");
  CHECK(lenient.isOpen(at("2026-12-06T11:00:00Z")));
  CHECK(schedule("Mon - Wed 10:00-12:00").isOpen(at("2026-12-08T11:00:00Z")));
}

TEST_CASE("rollout window: several windows separated by comma or semicolon", "[window]") {
  const RolloutSchedule s = schedule("Sat,Sun 10:00-12:00 Europe/Berlin, Mon-Fri 02:00-03:00; 20:00-21:00 UTC");
  REQUIRE(s.windows().size() == 3);
  CHECK(s.windows()[0].zoneName == "Europe/Berlin");
  CHECK(s.windows()[0].days == 0b1000001);
  CHECK(s.windows()[1].days == 0b0111110);
  CHECK(s.isOpen(at("2026-12-05T09:30:00Z")));                          // Saturday 10:30 in Berlin (CET)
  CHECK(s.isOpen(at("2026-12-07T02:30:00Z")));                          // Monday
  CHECK(s.isOpen(at("2026-12-08T20:30:00Z")));                          // any day
  CHECK(opening(s, "2026-12-05T12:00:00Z") == "2026-12-05T20:00:00Z");  // the earliest of them
}

TEST_CASE("rollout window: spring forward in Europe/Berlin shortens a window over the jump", "[window]") {
  // 2026-03-29: at 02:00 CET (01:00Z) the clocks jump to 03:00 CEST; 02:00-03:00 does not exist.
  const RolloutSchedule s = schedule("02:00-04:00 Europe/Berlin");
  CHECK(opening(s, "2026-03-28T12:00:00Z") == "2026-03-29T01:00:00Z");  // opens at the jump
  CHECK_FALSE(s.isOpen(at("2026-03-29T00:59:59Z")));                    // 01:59:59 CET
  CHECK(s.isOpen(at("2026-03-29T01:00:00Z")));                          // 03:00 CEST
  CHECK(s.isOpen(at("2026-03-29T01:59:59Z")));                          // 03:59:59 CEST
  CHECK_FALSE(s.isOpen(at("2026-03-29T02:00:00Z")));                    // 04:00 CEST: one hour long
  // The day before (CET) and after (CEST), two hours each.
  CHECK(s.isOpen(at("2026-03-28T01:00:00Z")));
  CHECK_FALSE(s.isOpen(at("2026-03-28T03:00:00Z")));
  CHECK(opening(s, "2026-03-29T02:00:00Z") == "2026-03-30T00:00:00Z");
  // A start inside the gap opens at the jump; an end inside it closes there.
  CHECK(opening(schedule("02:30-03:30 Europe/Berlin"), "2026-03-29T00:00:00Z") == "2026-03-29T01:00:00Z");
  const RolloutSchedule endInGap = schedule("01:00-02:30 Europe/Berlin");
  CHECK(endInGap.isOpen(at("2026-03-29T00:59:59Z")));
  CHECK_FALSE(endInGap.isOpen(at("2026-03-29T01:00:00Z")));
  // A window wholly inside the gap does not open that day: the next Sunday.
  CHECK(opening(schedule("Sun 02:10-02:50 Europe/Berlin"), "2026-03-28T12:00:00Z") == "2026-04-05T00:10:00Z");
}

TEST_CASE("rollout window: fall back in Europe/Berlin lengthens a window over the repeated hour", "[window]") {
  // 2026-10-25: at 03:00 CEST (01:00Z) the clocks go back to 02:00 CET; 02:00-03:00 happens twice.
  const RolloutSchedule s = schedule("02:00-04:00 Europe/Berlin");
  CHECK(opening(s, "2026-10-24T12:00:00Z") == "2026-10-25T00:00:00Z");  // the first 02:00 (CEST)
  CHECK_FALSE(s.isOpen(at("2026-10-24T23:59:59Z")));
  CHECK(s.isOpen(at("2026-10-25T00:00:00Z")));
  CHECK(s.isOpen(at("2026-10-25T01:30:00Z")));        // the second 02:30 (CET)
  CHECK(s.isOpen(at("2026-10-25T02:59:59Z")));        // 03:59:59 CET
  CHECK_FALSE(s.isOpen(at("2026-10-25T03:00:00Z")));  // 04:00 CET: three hours long
  // A window that ends in the repeated hour closes at its second occurrence.
  const RolloutSchedule endRepeated = schedule("01:00-02:30 Europe/Berlin");
  CHECK(endRepeated.isOpen(at("2026-10-25T01:29:59Z")));
  CHECK_FALSE(endRepeated.isOpen(at("2026-10-25T01:30:00Z")));
  // The next day, CET: 01:00Z to 03:00Z.
  CHECK(opening(s, "2026-10-25T03:00:00Z") == "2026-10-26T01:00:00Z");
}

TEST_CASE("rollout window: the decision follows a wall-clock step while a change is held", "[window]") {
  const RolloutSchedule s = schedule("02:00-04:00");
  const TimePoint heldAt = at("2026-12-05T01:00:00Z");
  REQUIRE_FALSE(s.isOpen(heldAt));
  const TimePoint opens = s.nextOpening(heldAt);
  // The controller looks again after at most kRolloutWindowRecheck, not after the hour.
  CHECK(rolloutWindowWait(heldAt, opens) == std::chrono::milliseconds(kRolloutWindowRecheck));
  CHECK(rolloutWindowWait(opens - 1500us, opens) == 2ms);
  CHECK(rolloutWindowWait(opens, opens) == 0ms);
  CHECK(rolloutWindowWait(opens + 1s, opens) == 0ms);
  // An NTP step forward of 61 minutes during that wait: the next look sees the window open.
  const TimePoint steppedForward = heldAt + kRolloutWindowRecheck + 61min;
  CHECK(s.isOpen(steppedForward));
  // A step back of an hour from inside the window: held again, until the same opening.
  const TimePoint steppedBack = at("2026-12-05T02:30:00Z") - 1h;
  CHECK_FALSE(s.isOpen(steppedBack));
  CHECK(s.nextOpening(steppedBack) == opens);
}

TEST_CASE("rollout window: invalid specs are refused with a message naming the problem", "[window]") {
  const std::string tooLong(kMaxRolloutWindowSpecBytes + 1, ' ');
  std::string tooMany;
  for (std::size_t i = 0; i <= kMaxRolloutWindows; ++i) tooMany += "01:00-02:00;";
  tooMany.pop_back();
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "empty (say \"always\" for no window)"},
      {"  ", "empty (say \"always\" for no window)"},
      {tooLong, "longer than 1024 bytes"},
      {tooMany, "17 windows, at most 16"},
      {"Mon-Fri", "window 1 (\"Mon-Fri\"): no time range (HH:MM-HH:MM)"},
      {"Mo 02:00-04:00",
       "window 1 (\"Mo 02:00-04:00\"): \"Mo\" is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)"},
      {"Mon-Fr 02:00-04:00",
       "window 1 (\"Mon-Fr 02:00-04:00\"): \"Fr\" is not a day (Mon, Tue, Wed, Thu, Fri, "
       "Sat, Sun)"},
      {"Sat,,Sun 02:00-04:00", "window 1 (\"Sat,,Sun 02:00-04:00\"): empty day in \"Sat,,Sun\""},
      {"02:00", "window 1 (\"02:00\"): \"02:00\" is not a time range (HH:MM-HH:MM, no spaces)"},
      {"02:00 - 04:00", "window 1 (\"02:00 - 04:00\"): \"02:00\" is not a time range (HH:MM-HH:MM, no spaces)"},
      {"01:00-02:00; 25:00-04:00",
       "window 2 (\"25:00-04:00\"): \"25:00\" is not a start time (HH:MM, 00:00 to 23:59)"},
      {"24:00-04:00", "window 1 (\"24:00-04:00\"): \"24:00\" is not a start time (HH:MM, 00:00 to 23:59)"},
      {"02:60-04:00", "window 1 (\"02:60-04:00\"): \"02:60\" is not a start time (HH:MM, 00:00 to 23:59)"},
      {"2-4", "window 1 (\"2-4\"): \"2\" is not a start time (HH:MM, 00:00 to 23:59)"},
      {"02:00-4", "window 1 (\"02:00-4\"): \"4\" is not an end time (HH:MM, 00:00 to 24:00)"},
      {"02:00-24:30", "window 1 (\"02:00-24:30\"): \"24:30\" is not an end time (HH:MM, 00:00 to 24:00)"},
      {"02:00-02:00",
       "window 1 (\"02:00-02:00\"): start and end are the same time (a whole day is 00:00-24:00)"},
      {"00:00-00:00",
       "window 1 (\"00:00-00:00\"): start and end are the same time (a whole day is 00:00-24:00)"},
      {"02:00-04:00 Europe/Berln",
       "window 1 (\"02:00-04:00 Europe/Berln\"): unknown time zone \"Europe/Berln\" (an IANA name such as "
       "Europe/Berlin from the system's tz database, or UTC)"},
      {"02:00-04:00 ../../etc/passwd",
       "window 1 (\"02:00-04:00 ../../etc/passwd\"): \"../../etc/passwd\" is not a time zone (an IANA name such "
       "as Europe/Berlin, or UTC)"},
      {"02:00-04:00 UTC extra",
       "window 1 (\"02:00-04:00 UTC extra\"): unexpected \"extra\" after the time zone"},
      {"01:00-02:00;", "window 2 (\"\"): empty"},
      // A quoted window is cut at a character boundary (79 ASCII bytes, then a 2-byte character).
      {std::string(79, 'x') + "\xc3\xa4 01:00-02:00", "window 1 (\"" + std::string(79, 'x') + "...\"): \"" +
                                                          std::string(79, 'x') +
                                                          "\xc3\xa4\" is not a day (Mon, Tue, "
                                                          "Wed, Thu, Fri, Sat, Sun)"},
  };
  for (const auto& [spec, message] : cases) {
    INFO(spec);
    auto parsed = parseRolloutSchedule(spec);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().kind == ErrorKind::InvalidInput);
    CHECK(parsed.error().message == message);
  }
}
