#include "restarter/obs/log.hpp"

#include <chrono>
#include <ostream>

#include <nlohmann/json.hpp>

#include "restarter/base/clock.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/core/text.hpp"

namespace restarter::obs {

core::Result<LogLevel> parseLogLevel(std::string_view name) {
  for (LogLevel level : {LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error}) {
    if (name == logLevelName(level)) return level;
  }
  return core::makeError(core::ErrorKind::InvalidInput,
                         "unknown log level \"" + std::string(name) + "\" (use debug, info, warn or error)");
}

core::Result<LogFormat> parseLogFormat(std::string_view name) {
  for (const LogFormat format : {LogFormat::Text, LogFormat::Json}) {
    if (name == logFormatName(format)) return format;
  }
  return core::makeError(core::ErrorKind::InvalidInput,
                         "unknown log format \"" + std::string(name) + "\" (use text or json)");
}

const char* logFormatName(LogFormat format) noexcept { return format == LogFormat::Json ? "json" : "text"; }

const char* logLevelName(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
  }
  return "info";
}

namespace {

// A text value is quoted (JSON string rules) when it is empty or holds a space, quote, '=' or a
// control character, so every line splits back into its fields unambiguously.
std::string textValue(const std::string& value) {
  bool plain = !value.empty();
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= ' ' || c == '"' || c == '=' || c == 0x7f) {
      plain = false;
      break;
    }
  }
  if (plain) return value;
  return nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A field value as a line holds it (log.hpp kMaxLogValueBytes).
std::string bounded(const std::string& value) {
  if (value.size() <= kMaxLogValueBytes) return value;
  return core::truncateUtf8(value, kMaxLogValueBytes) + "...(" + std::to_string(value.size()) + " bytes)";
}

std::string upper(const char* name) {
  std::string out(name);
  for (char& c : out) c = static_cast<char>(c - ('a' <= c && c <= 'z' ? 'a' - 'A' : 0));
  return out;
}

}  // namespace

std::string formatLogLine(LogFormat format, core::TimePoint time, LogLevel level, std::string_view message,
                          const Fields& fields) {
  if (format == LogFormat::Json) {
    nlohmann::ordered_json line;
    line["ts"] = base::formatRfc3339(time);
    line["level"] = logLevelName(level);
    line["msg"] = message;
    for (const Field& field : fields) line[field.key] = bounded(field.value);
    return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  std::string line = base::formatRfc3339(time) + " " + upper(logLevelName(level)) + " ";
  line += message;
  for (const Field& field : fields) line += " " + field.key + "=" + textValue(bounded(field.value));
  return line;
}

Logger::Logger(std::ostream& out, LogFormat format, LogLevel minimum, ClockFn clock)
    : out_(out), format_(format), minimum_(minimum), clock_(std::move(clock)) {
  if (!clock_) {
    clock_ = [] {
      return std::chrono::time_point_cast<std::chrono::microseconds>(base::systemClock().wallNow());
    };
  }
}

void Logger::log(LogLevel level, std::string_view message, const Fields& fields) {
  if (!enabled(level)) return;
  const std::string line = formatLogLine(format_, clock_(), level, message, fields);
  std::lock_guard<std::mutex> lock(mutex_);
  out_ << line << '\n';
  out_.flush();
}

}  // namespace restarter::obs
