#include "restarter/core/rollout_window.hpp"

#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"

#include "restarter/core/text.hpp"

#include <date/date.h>
#include <date/tz.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <exception>
#include <optional>

namespace restarter::core {

namespace {

constexpr std::array<std::string_view, 7> kDayNames{"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
constexpr std::size_t kMaxZoneNameBytes = 64;
constexpr std::size_t kQuotedWindowBytes = 80;
// How far nextOpening looks, in days: a week, and more for a day a DST gap swallowed.
constexpr int kSearchDays = 371;

bool isSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  return text;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool hasDigit(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string_view> tokens(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && isSpace(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !isSpace(text[i])) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::string quoted(std::string_view text) {
  // Cut at a character boundary: the message goes into Events and logs, which must stay UTF-8.
  if (text.size() > kQuotedWindowBytes) return "\"" + truncateUtf8(text, kQuotedWindowBytes) + "...\"";
  return "\"" + std::string(text) + "\"";
}

// The windows' texts: split at ";" and at a "," that follows a time range (a "," before one
// joins days).
std::vector<std::string_view> splitWindows(std::string_view spec) {
  std::vector<std::string_view> windows;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= spec.size(); ++i) {
    if (i < spec.size() && spec[i] != ';' && spec[i] != ',') continue;
    const std::string_view sofar = spec.substr(start, i - start);
    if (i < spec.size() && spec[i] == ',' && !hasDigit(sofar)) continue;  // inside the days
    windows.push_back(trim(sofar));
    start = i + 1;
  }
  return windows;
}

std::optional<int> dayIndex(std::string_view name) {
  const std::string wanted = lower(name);
  for (std::size_t d = 0; d < kDayNames.size(); ++d) {
    if (kDayNames[d] == wanted) return static_cast<int>(d);
  }
  return std::nullopt;
}

Result<unsigned> parseDays(std::string_view text) {
  unsigned days = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    const std::string_view item = text.substr(start, i - start);
    start = i + 1;
    if (item.empty()) return makeError(ErrorKind::InvalidInput, "empty day in \"" + std::string(text) + "\"");
    const std::size_t dash = item.find('-');
    const std::string_view first = item.substr(0, dash);
    const std::string_view last = dash == std::string_view::npos ? first : item.substr(dash + 1);
    const std::optional<int> from = dayIndex(first);
    const std::optional<int> to = dayIndex(last);
    for (const auto& [name, index] : {std::pair{first, from}, std::pair{last, to}}) {
      if (!index) {
        return makeError(ErrorKind::InvalidInput,
                         "\"" + std::string(name) + "\" is not a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)");
      }
    }
    for (int d = *from;; d = (d + 1) % 7) {  // a range may wrap: Fri-Mon
      days |= 1U << static_cast<unsigned>(d);
      if (d == *to) break;
    }
  }
  return days;
}

// "HH:MM" (H:MM too) as minutes after midnight; 24:00 only as an end.
std::optional<int> parseTime(std::string_view text, bool end) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 2 || text.size() != colon + 3)
    return std::nullopt;
  int hours = 0;
  for (char c : text.substr(0, colon)) {
    if (c < '0' || c > '9') return std::nullopt;
    hours = hours * 10 + (c - '0');
  }
  const char m1 = text[colon + 1];
  const char m2 = text[colon + 2];
  if (m1 < '0' || m1 > '5' || m2 < '0' || m2 > '9') return std::nullopt;
  const int minutes = hours * 60 + (m1 - '0') * 10 + (m2 - '0');
  if (hours < 24 || (end && minutes == 24 * 60)) return minutes;
  return std::nullopt;
}

Result<const date::time_zone*> locateZone(std::string_view name) {
  if (lower(name) == "utc") return static_cast<const date::time_zone*>(nullptr);
  const std::string shown = quoted(name);
  const bool wellFormed =
      name.size() <= kMaxZoneNameBytes && name.find("..") == std::string_view::npos &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '+' || c == '-';
      });
  if (!wellFormed) {
    return makeError(ErrorKind::InvalidInput,
                     shown + " is not a time zone (an IANA name such as Europe/Berlin, or UTC)");
  }
  try {
    return date::locate_zone(name);
  } catch (const std::exception& e) {
    // locate_zone throws for an unknown name, and when the database cannot be read at all.
    std::string why = e.what();
    if (why.find("not found") != std::string::npos) {
      return makeError(ErrorKind::InvalidInput, "unknown time zone " + shown +
                                                    " (an IANA name such as Europe/Berlin from the system's "
                                                    "tz database, or UTC)");
    }
    return makeError(ErrorKind::InvalidInput,
                     "time zone " + shown + ": the tz database cannot be read: " + why);
  }
}

Result<RolloutWindow> parseWindow(std::string_view text) {
  const std::vector<std::string_view> words = tokens(text);
  // Leading words without digits are the days ("Sat, Sun" and "Mon - Fri" too).
  std::string dayText;
  std::size_t i = 0;
  for (; i < words.size() && !hasDigit(words[i]); ++i) dayText += words[i];
  RolloutWindow window;
  if (!dayText.empty()) {
    auto days = parseDays(dayText);
    if (!days) return std::move(days).error();
    window.days = *days;
  }
  if (i == words.size()) return makeError(ErrorKind::InvalidInput, "no time range (HH:MM-HH:MM)");
  const std::string_view range = words[i++];
  const std::size_t dash = range.find('-');
  if (dash == std::string_view::npos) {
    return makeError(ErrorKind::InvalidInput,
                     "\"" + std::string(range) + "\" is not a time range (HH:MM-HH:MM, no spaces)");
  }
  const std::string_view startText = range.substr(0, dash);
  const std::string_view endText = range.substr(dash + 1);
  const std::optional<int> start = parseTime(startText, false);
  if (!start) {
    return makeError(ErrorKind::InvalidInput,
                     "\"" + std::string(startText) + "\" is not a start time (HH:MM, 00:00 to 23:59)");
  }
  const std::optional<int> end = parseTime(endText, true);
  if (!end) {
    return makeError(ErrorKind::InvalidInput,
                     "\"" + std::string(endText) + "\" is not an end time (HH:MM, 00:00 to 24:00)");
  }
  if (*start == *end) {
    return makeError(ErrorKind::InvalidInput, "start and end are the same time (a whole day is 00:00-24:00)");
  }
  window.startMinute = *start;
  window.endMinute = *end;
  if (i < words.size()) {
    auto zone = locateZone(words[i]);
    if (!zone) return std::move(zone).error();
    window.zone = *zone;
    window.zoneName = *zone == nullptr ? "UTC" : std::string(words[i]);
    ++i;
  }
  if (i < words.size()) {
    return makeError(ErrorKind::InvalidInput,
                     "unexpected \"" + std::string(words[i]) + "\" after the " +
                         (window.zone != nullptr || lower(words[i - 1]) == "utc" ? "time zone" : "time range"));
  }
  return window;
}

using LocalMinutes = date::local_time<std::chrono::minutes>;

date::local_days localDayOf(const RolloutWindow& window, TimePoint now) {
  if (window.zone == nullptr) return date::local_days{std::chrono::floor<date::days>(now).time_since_epoch()};
  return std::chrono::floor<date::days>(window.zone->to_local(now));
}

TimePoint toSys(const RolloutWindow& window, LocalMinutes local, date::choose choose) {
  if (window.zone == nullptr) return TimePoint{local.time_since_epoch()};
  return std::chrono::time_point_cast<std::chrono::microseconds>(window.zone->to_sys(local, choose));
}

struct Interval {
  bool opens = false;  // the window opens on this day and is not empty
  TimePoint start{};
  TimePoint end{};
};

// The window's interval that starts on local day `day`.
Interval intervalOn(const RolloutWindow& window, date::local_days day) {
  const unsigned weekday = date::weekday{day}.c_encoding();
  if ((window.days & (1U << weekday)) == 0) return {};
  const LocalMinutes startLocal = day + std::chrono::minutes(window.startMinute);
  LocalMinutes endLocal = day + std::chrono::minutes(window.endMinute);
  if (window.endMinute <= window.startMinute) endLocal += date::days{1};
  // From the first instant the clock shows the start to the last instant it shows the end: a
  // time in a DST gap is the jump, a repeated one the first (start) or second (end) occurrence.
  Interval interval{true, toSys(window, startLocal, date::choose::earliest),
                    toSys(window, endLocal, date::choose::latest)};
  interval.opens = interval.start < interval.end;
  return interval;
}

}  // namespace

bool RolloutSchedule::isOpen(TimePoint now) const {
  if (windows_.empty()) return true;
  for (const RolloutWindow& window : windows_) {
    const date::local_days today = localDayOf(window, now);
    for (const date::local_days day : {today - date::days{1}, today}) {
      const Interval interval = intervalOn(window, day);
      if (interval.opens && interval.start <= now && now < interval.end) return true;
    }
  }
  return false;
}

TimePoint RolloutSchedule::nextOpening(TimePoint now) const {
  if (windows_.empty()) return now;
  std::optional<TimePoint> best;
  for (const RolloutWindow& window : windows_) {
    const date::local_days today = localDayOf(window, now);
    for (int offset = -1; offset <= kSearchDays; ++offset) {
      const Interval interval = intervalOn(window, today + date::days{offset});
      if (best && interval.opens && interval.start >= *best) break;
      if (!interval.opens || interval.end <= now) continue;
      best = std::max(interval.start, now);
      break;  // later days of this window start later
    }
  }
  return best.value_or(now + date::days{kSearchDays});
}

std::chrono::milliseconds rolloutWindowWait(TimePoint now, TimePoint opening) {
  if (opening <= now) return std::chrono::milliseconds(0);
  return std::min<std::chrono::milliseconds>(std::chrono::ceil<std::chrono::milliseconds>(opening - now),
                                             kRolloutWindowRecheck);
}

Result<RolloutSchedule> parseRolloutSchedule(std::string_view spec) {
  if (spec.size() > kMaxRolloutWindowSpecBytes) {
    return makeError(ErrorKind::InvalidInput,
                     "longer than " + std::to_string(kMaxRolloutWindowSpecBytes) + " bytes");
  }
  const std::string_view text = trim(spec);
  if (text.empty()) return makeError(ErrorKind::InvalidInput, "empty (say \"always\" for no window)");
  if (lower(text) == "always") return RolloutSchedule();
  const std::vector<std::string_view> texts = splitWindows(text);
  if (texts.size() > kMaxRolloutWindows) {
    return makeError(ErrorKind::InvalidInput,
                     std::to_string(texts.size()) + " windows, at most " + std::to_string(kMaxRolloutWindows));
  }
  std::vector<RolloutWindow> windows;
  for (std::size_t n = 0; n < texts.size(); ++n) {
    const std::string label = "window " + std::to_string(n + 1) + " (" + quoted(texts[n]) + "): ";
    if (texts[n].empty()) return makeError(ErrorKind::InvalidInput, label + "empty");
    auto window = parseWindow(texts[n]);
    if (!window) return makeError(ErrorKind::InvalidInput, label + window.error().message);
    windows.push_back(std::move(*window));
  }
  return RolloutSchedule(std::move(windows));
}

std::optional<OwnRolloutWindow> ownRolloutWindowOf(const nlohmann::json& workload) {
  const nlohmann::json* annotation = valueAt(workload, {"metadata", "annotations", kRolloutWindowAnnotation});
  if (annotation == nullptr) return std::nullopt;
  if (!annotation->is_string())
    return OwnRolloutWindow{annotation->dump(), makeError(ErrorKind::InvalidInput, "not a string")};
  std::string spec = annotation->get<std::string>();
  auto schedule = parseRolloutSchedule(spec);
  return OwnRolloutWindow{std::move(spec), std::move(schedule)};
}

}  // namespace restarter::core
