#pragma once
// Time as restarter reads and writes it: RFC 3339 times and Go-style durations. Pure: nothing here
// reads a clock; callers pass "now" in (docs/architecture.md, "Injected time").

#include <chrono>
#include <string>
#include <string_view>

#include "restarter/core/result.hpp"

namespace restarter::core {

// Microseconds keep every RFC 3339 time of years 0000-9999 in range; finer digits are truncated.
using TimePoint = std::chrono::sys_time<std::chrono::microseconds>;

// Parses an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`, 'T' and 'Z' in
// either case, a leap second (:60) read as the next second. InvalidInput naming the problem for
// anything else (no time zone, out-of-range fields, trailing text).
Result<TimePoint> parseRfc3339(std::string_view text);

// Formats in UTC as `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (fraction only when non-zero).
std::string formatRfc3339(TimePoint time);

// Parses a duration such as "90s", "15m", "24h", "1h30m", "30d" (d = 24h, an extension of Go's
// syntax for certificate lifetimes). Whole numbers only; at least one unit; no sign. InvalidInput
// naming the problem otherwise, also on overflow.
Result<std::chrono::seconds> parseDuration(std::string_view text);

// Formats as the largest exact units: "24h", "1h30m", "45s", "0s".
std::string formatDuration(std::chrono::seconds duration);

}  // namespace restarter::core
