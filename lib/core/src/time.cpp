#include "restarter/core/time.hpp"

#include <limits>

namespace restarter::core {

Result<std::chrono::milliseconds> parseDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return makeError(ErrorKind::InvalidInput, "not a duration (" + std::string(why) + "): \"" +
                                                  std::string(text) + "\"; use e.g. 500ms, 90s, 15m, 24h, 30d");
  };
  if (text.empty()) return bad("empty");
  if (text == "0") return std::chrono::milliseconds{0};
  constexpr long long kMax = std::numeric_limits<long long>::max() / 2;
  long long total = 0;  // milliseconds
  std::size_t pos = 0;
  while (pos < text.size()) {
    long long number = 0;
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (number > (kMax - 9) / 10) return bad("too large");
      number = number * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == start) return bad("expected a number");
    if (pos == text.size()) return bad("missing unit (ms, s, m, h or d)");
    long long unit = 0;
    if (text.substr(pos, 2) == "ms") {
      unit = 1;
      pos += 2;
    } else {
      switch (text[pos]) {
        case 's': unit = 1000; break;
        case 'm': unit = 60 * 1000; break;
        case 'h': unit = 3600 * 1000; break;
        case 'd': unit = 86400 * 1000; break;
        default: return bad("unknown unit");
      }
      ++pos;
    }
    if (number > (kMax - total) / unit) return bad("too large");
    total += number * unit;
  }
  return std::chrono::milliseconds{total};
}

Result<std::chrono::milliseconds> parseDurationWithin(std::string_view text, const DurationBounds& bounds) {
  auto duration = parseDuration(text);
  if (!duration) return duration;
  if (*duration < bounds.min) {
    return makeError(ErrorKind::InvalidInput, bounds.min == std::chrono::milliseconds{1}
                                                  ? std::string("must be more than 0")
                                                  : "must be at least " + formatDuration(bounds.min));
  }
  if (*duration > bounds.max)
    return makeError(ErrorKind::InvalidInput, "must be at most " + formatDuration(bounds.max));
  if (bounds.wholeSeconds && duration->count() % 1000 != 0) {
    return makeError(ErrorKind::InvalidInput, "must be whole seconds, not \"" + std::string(text) + "\"");
  }
  return duration;
}

std::string formatDuration(std::chrono::milliseconds duration) {
  if (duration.count() > 0 && duration.count() % 1000 != 0) return std::to_string(duration.count()) + "ms";
  return formatWholeSeconds(std::chrono::duration_cast<std::chrono::seconds>(duration));
}

std::string formatWholeSeconds(std::chrono::seconds duration) {
  long long left = duration.count();
  if (left <= 0) return "0s";
  std::string out;
  const long long hoursPart = left / 3600;
  left %= 3600;
  if (hoursPart > 0) out += std::to_string(hoursPart) + "h";
  if (left / 60 > 0) out += std::to_string(left / 60) + "m";
  if (left % 60 > 0) out += std::to_string(left % 60) + "s";
  return out;
}

}  // namespace restarter::core
