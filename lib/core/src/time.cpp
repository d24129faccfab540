#include "restarter/core/time.hpp"

#include <limits>

namespace restarter::core {

Result<std::chrono::seconds> parseDuration(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return makeError(ErrorKind::InvalidInput, "not a duration (" + std::string(why) + "): \"" +
                                                  std::string(text) + "\"; use e.g. 90s, 15m, 24h, 30d");
  };
  if (text.empty()) return bad("empty");
  constexpr long long kMax = std::numeric_limits<long long>::max() / 2;
  long long total = 0;
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
    if (pos == text.size()) return bad("missing unit (s, m, h or d)");
    long long unit = 0;
    switch (text[pos]) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: return bad("unknown unit");
    }
    ++pos;
    if (number > (kMax - total) / unit) return bad("too large");
    total += number * unit;
  }
  return std::chrono::seconds{total};
}

std::string formatDuration(std::chrono::seconds duration) {
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
