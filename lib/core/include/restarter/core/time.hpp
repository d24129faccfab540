#pragma once
// Time as restarter's decisions take it: a wall time point and Go-style durations. Pure: nothing
// here reads a clock; callers pass "now" in (docs/architecture.md, "Injected time"). RFC 3339
// text is read and written by base/rfc3339.hpp.

#include <chrono>
#include <string>
#include <string_view>

#include "restarter/core/result.hpp"

namespace restarter::core {

// Microseconds keep every RFC 3339 time of years 0000-9999 in range (the same type as
// base::WallMicros, which base::parseRfc3339 returns).
using TimePoint = std::chrono::sys_time<std::chrono::microseconds>;

// Parses a duration such as "90s", "15m", "24h", "1h30m", "30d" (d = 24h, an extension of Go's
// syntax for certificate lifetimes). Whole numbers only; at least one unit; no sign. InvalidInput
// naming the problem otherwise, also on overflow.
Result<std::chrono::seconds> parseDuration(std::string_view text);

// Formats as the largest exact units: "24h", "1h30m", "45s", "0s".
std::string formatDuration(std::chrono::seconds duration);

}  // namespace restarter::core
