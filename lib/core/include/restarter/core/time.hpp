#pragma once
// Time as restarter's decisions take it: a wall time point and Go-style durations. Pure: nothing
// here reads a clock; callers pass "now" in (docs/architecture.md, "Injected time"). RFC 3339
// text is read and written by base/rfc3339.hpp.

#include <chrono>
#include <ratio>
#include <string>
#include <string_view>

#include "restarter/core/result.hpp"

namespace restarter::core {

// Microseconds keep every RFC 3339 time of years 0000-9999 in range (the same type as
// base::WallMicros, which base::parseRfc3339 returns).
using TimePoint = std::chrono::sys_time<std::chrono::microseconds>;

// Parses a duration such as "250ms", "90s", "15m", "24h", "1h30m", "30d" (d = 24h, an extension of
// Go's syntax for certificate lifetimes); "0" alone is zero, as in Go. Whole numbers only; at least
// one unit; no sign. InvalidInput naming the problem otherwise, also on overflow. The one duration
// parser of every flag: the cli reads each through DurationBounds.
Result<std::chrono::milliseconds> parseDuration(std::string_view text);

// What a flag's duration may be. `wholeSeconds` for a value kept in seconds (certificate lifetimes,
// timeouts), so that "1500ms" is refused rather than cut to 1s.
struct DurationBounds {
  std::chrono::milliseconds min{0};
  std::chrono::milliseconds max = std::chrono::milliseconds::max();
  bool wholeSeconds = false;
};
// parseDuration, then `bounds`: "must be more than 0" (min 1ms), "must be at least X",
// "must be at most X", "must be whole seconds".
Result<std::chrono::milliseconds> parseDurationWithin(std::string_view text, const DurationBounds& bounds);

// Formats as the largest exact units: "24h", "1h30m", "45s", "0s" (zero or less); "1500ms" when not
// whole seconds. parseDuration reads every text it writes.
std::string formatDuration(std::chrono::milliseconds duration);
std::string formatWholeSeconds(std::chrono::seconds duration);
// A duration in seconds or coarser units is formatted as it is: converting it to milliseconds
// would overflow for values near seconds::max() (a bound, or a lifetime given in days).
template <class Rep, class Period>
requires std::ratio_greater_equal_v<Period, std::ratio<1>> std::string formatDuration(
    std::chrono::duration<Rep, Period> duration) {
  return formatWholeSeconds(std::chrono::duration_cast<std::chrono::seconds>(duration));
}

}  // namespace restarter::core
