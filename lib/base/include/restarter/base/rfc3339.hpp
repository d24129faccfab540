#pragma once
// The one RFC 3339 formatter and parser: annotations, logs, Events, Leases (metav1.MicroTime) and
// certificate reports all write times through it. Pure: nothing here reads a clock.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace restarter::base {

// Microseconds keep every RFC 3339 time of years 0000-9999 in range; finer digits are truncated.
// The same type as core::TimePoint.
using WallMicros = std::chrono::sys_time<std::chrono::microseconds>;

enum class Fraction {
  WhenNonZero,  // `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`: metav1.Time, annotations, logs
  Micros,       // `YYYY-MM-DDTHH:MM:SS.ffffffZ`, always six digits: metav1.MicroTime
};

// Formats in UTC.
std::string formatRfc3339(WallMicros time, Fraction fraction = Fraction::WhenNonZero);

// Parses an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)`, 'T' and 'Z' in
// either case, a leap second (:60) read as the next second. nullopt for anything else (no time
// zone, out-of-range fields, trailing text); then `problem`, when given, receives a message naming
// the problem and quoting the text.
std::optional<WallMicros> parseRfc3339(std::string_view text, std::string* problem = nullptr);

}  // namespace restarter::base
