#include "restarter/base/rfc3339.hpp"

#include <cstdio>

namespace restarter::base {

namespace {

using std::chrono::days;
using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// A cursor over the text that reads fixed-width decimal fields.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  // Reads exactly `width` digits into `out`.
  bool digits(std::size_t width, int& out) {
    if (pos_ + width > text_.size()) return false;
    int value = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const char c = text_[pos_ + i];
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    pos_ += width;
    out = value;
    return true;
  }

  // Consumes one of `choices` and returns it, or '\0'.
  char oneOf(std::string_view choices) {
    if (pos_ < text_.size() && choices.find(text_[pos_]) != std::string_view::npos) {
      return text_[pos_++];
    }
    return '\0';
  }

  // Reads one or more digits as a fraction of a second, truncated to microseconds.
  bool fraction(long long& micros) {
    const std::size_t start = pos_;
    micros = 0;
    int kept = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (kept < 6) {
        micros = micros * 10 + (text_[pos_] - '0');
        ++kept;
      }
      ++pos_;
    }
    for (; kept < 6; ++kept) micros *= 10;
    return pos_ > start;
  }

  bool atEnd() const { return pos_ == text_.size(); }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

std::nullopt_t invalid(std::string_view text, std::string_view why, std::string* problem) {
  if (problem != nullptr)
    *problem = "not an RFC 3339 time (" + std::string(why) + "): \"" + std::string(text) + "\"";
  return std::nullopt;
}

}  // namespace

std::optional<WallMicros> parseRfc3339(std::string_view text, std::string* problem) {
  Scanner in(text);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!in.digits(4, year) || !in.oneOf("-") || !in.digits(2, month) || !in.oneOf("-") || !in.digits(2, day)) {
    return invalid(text, "expected a date YYYY-MM-DD", problem);
  }
  if (!in.oneOf("Tt")) return invalid(text, "expected 'T' between date and time", problem);
  if (!in.digits(2, hour) || !in.oneOf(":") || !in.digits(2, minute) || !in.oneOf(":") ||
      !in.digits(2, second)) {
    return invalid(text, "expected a time HH:MM:SS", problem);
  }
  long long micros = 0;
  if (in.oneOf(".") && !in.fraction(micros)) {
    return invalid(text, "expected digits after the decimal point", problem);
  }
  minutes offset{0};
  const char zone = in.oneOf("Zz+-");
  if (zone == '\0') return invalid(text, "expected a time zone (Z or +HH:MM)", problem);
  if (zone == '+' || zone == '-') {
    int offsetHours = 0, offsetMinutes = 0;
    if (!in.digits(2, offsetHours) || !in.oneOf(":") || !in.digits(2, offsetMinutes)) {
      return invalid(text, "expected a time zone offset +HH:MM", problem);
    }
    if (offsetHours > 23 || offsetMinutes > 59) return invalid(text, "time zone offset out of range", problem);
    offset = hours(offsetHours) + minutes(offsetMinutes);
    if (zone == '-') offset = -offset;
  }
  if (!in.atEnd()) return invalid(text, "unexpected text after the time zone", problem);

  const std::chrono::year_month_day date{std::chrono::year{year},
                                         std::chrono::month{static_cast<unsigned>(month)},
                                         std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok()) return invalid(text, "no such date", problem);
  if (hour > 23 || minute > 59 || second > 60) return invalid(text, "time of day out of range", problem);

  // A leap second (:60) is read as the first second of the next minute.
  const WallMicros local =
      std::chrono::sys_days{date} + hours(hour) + minutes(minute) + seconds(second) + microseconds(micros);
  return WallMicros{local - offset};
}

std::string formatRfc3339(WallMicros time, Fraction fraction) {
  const auto day = std::chrono::floor<days>(time);
  const std::chrono::year_month_day date{day};
  const std::chrono::hh_mm_ss<microseconds> clock{time - day};
  char buffer[64];
  const auto micros = clock.subseconds().count();
  if (micros != 0 || fraction == Fraction::Micros) {
    std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ", static_cast<int>(date.year()),
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                  static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                  static_cast<int>(clock.seconds().count()), static_cast<long long>(micros));
  } else {
    std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(date.year()),
                  static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                  static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
                  static_cast<int>(clock.seconds().count()));
  }
  return buffer;
}

}  // namespace restarter::base
