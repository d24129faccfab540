#pragma once
// Rollout windows (docs/behaviour.md, "Rollout windows"): when a workload may start a rollout.
// The workload annotation kRolloutWindowAnnotation (constants.hpp) or serve-controller
// --rollout-window names them; a change outside every window is held until the next opening.
//
// Grammar (case-insensitive day names and keyword; spaces and tabs separate tokens):
//   spec   := "always" | window ( ( "," | ";" ) window )*
//   window := [ days ] time "-" time [ zone ]
//   days   := day-item ( "," day-item )*          no spaces inside the list
//   day-item := day | day "-" day                  a range may wrap: "Fri-Mon" is Fri, Sat, Sun, Mon
//   day    := Mon | Tue | Wed | Thu | Fri | Sat | Sun
//   time   := HH:MM                                00:00 to 23:59, or 24:00 as an end
//   zone   := an IANA name of the system's tz database ("Europe/Berlin"), or UTC (the default)
// Examples: "02:00-04:00" (every day, UTC), "Mon-Fri 02:00-04:00 Europe/Berlin",
// "Sat,Sun 10:00-16:00 Europe/Berlin; Mon-Fri 22:00-02:00 America/New_York".
// A "," after a window's time range (or zone) starts the next window; within the days it joins
// days. Without days, a window is every day.
//
// Semantics, each computed from the local calendar day of the window's zone:
//   - a window whose end is before its start ("22:00-02:00") crosses midnight and belongs to the
//     day it starts on: "Fri 22:00-02:00" is Friday 22:00 to Saturday 02:00;
//   - equal start and end is an error (say "00:00-24:00" for a whole day);
//   - the window opens at the first instant the local clock shows its start and closes at the
//     last instant it shows its end (exclusive). A start inside a DST gap (02:30 on a spring-
//     forward day in Europe/Berlin) opens at the jump (03:00 CEST); a start in the repeated hour
//     of a fall-back day opens at its first occurrence, an end there closes at its second, so the
//     window is longer by the repeated hour; a window wholly inside a gap does not open that day.
// Time zones and their DST rules come from the system's tz database (tzdata, /usr/share/zoneinfo)
// through Howard Hinnant's date/tz (Debian libhowardhinnant-date-dev, libdate-tz3): nothing here
// knows a rule. Apart from that database (read once, by the library), pure: "now" is passed in
// (docs/architecture.md, "Injected time"), so an NTP step of the wall clock only changes the
// answer of the next call.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/result.hpp"
#include "restarter/core/time.hpp"

namespace date {
class time_zone;
}

namespace restarter::core {

// Bounds of a spec, an annotation value anyone with write access to the workload sets.
inline constexpr std::size_t kMaxRolloutWindowSpecBytes = 1024;
inline constexpr std::size_t kMaxRolloutWindows = 16;

// While a change is held by a window, the controller looks again at least this often even when
// the next opening is later: its timer runs on the monotonic clock, so a forward step of the wall
// clock (an NTP correction) would otherwise be noticed only at the old opening. A step backwards
// needs nothing: each look decides from the wall clock's "now" again and holds again.
inline constexpr std::chrono::minutes kRolloutWindowRecheck{1};

// The Event reason of an invalid rollout window (a Warning on the workload, once per value).
inline constexpr std::string_view kInvalidRolloutWindowReason = "InvalidRolloutWindow";

struct RolloutWindow {
  unsigned days = 0x7f;  // bit d set: the window opens on weekday d (0 = Sunday, as date::weekday)
  int startMinute = 0;   // minutes after local midnight, 0..1439
  int endMinute = 0;     // 1..1440; <= startMinute: ends on the next day
  const date::time_zone* zone = nullptr;  // nullptr: UTC
  std::string zoneName = "UTC";
};

class RolloutSchedule {
 public:
  // No window: always open ("always").
  RolloutSchedule() = default;
  explicit RolloutSchedule(std::vector<RolloutWindow> windows) : windows_(std::move(windows)) {}

  bool always() const { return windows_.empty(); }
  const std::vector<RolloutWindow>& windows() const { return windows_; }

  // Whether some window is open at `now`.
  bool isOpen(TimePoint now) const;
  // The first instant at or after `now` at which some window is open: `now` itself when open.
  // Always within a year of `now` for a parsed schedule (each window opens at least one day a
  // week, and DST gaps swallow at most a few of them); `now` when always open.
  TimePoint nextOpening(TimePoint now) const;

 private:
  std::vector<RolloutWindow> windows_;
};

// How long a change held by a window waits before the controller looks again: until `opening`
// (rounded up to a millisecond), at most kRolloutWindowRecheck; zero when it has come.
std::chrono::milliseconds rolloutWindowWait(TimePoint now, TimePoint opening);

// Parses a spec (grammar above). InvalidInput with a message that names the window and the
// token: `window 2 ("Mon-Fri 25:00-04:00"): "25:00" is not a time (HH:MM, 00:00 to 24:00)`.
// Never throws; also not when the tz database is missing (then a zone other than UTC is an
// error saying so).
Result<RolloutSchedule> parseRolloutSchedule(std::string_view spec);

// A workload's own window, as the controller, explain-restart and status read it: the text of its
// kRolloutWindowAnnotation (a value that is no string: its JSON text) and that text parsed (no
// string: InvalidInput "not a string"). nullopt without the annotation: serve-controller's
// --rollout-window applies. Never throws.
struct OwnRolloutWindow {
  std::string spec;
  Result<RolloutSchedule> schedule;
};
std::optional<OwnRolloutWindow> ownRolloutWindowOf(const nlohmann::json& workload);

}  // namespace restarter::core
