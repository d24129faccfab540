#pragma once
// restarter::obs — structured logs, Prometheus metrics, health endpoints. A leaf module.
//
// Logs: a constant message plus key=value fields, as text
//   2026-11-29T18:10:00.123456Z INFO restart triggered workload=default/web cause="configmap/a: ..."
// or as one JSON object per line:
//   {"ts":"2026-11-29T18:10:00.123456Z","level":"info","msg":"restart triggered","workload":...}
// Thread-safe: lines from different threads never interleave.
// Bounded: every field value longer than kMaxLogValueBytes is cut there (never inside a UTF-8
// character) and marked with its full length, so no input (a name, an error text, a review's
// detail) makes a long line: a line holds its constant message and keys plus at most that per field.

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "restarter/core/result.hpp"
#include "restarter/core/time.hpp"

namespace restarter::obs {

enum class LogLevel { Debug, Info, Warn, Error };
enum class LogFormat { Text, Json };

core::Result<LogLevel> parseLogLevel(std::string_view name);    // debug, info, warn, error
core::Result<LogFormat> parseLogFormat(std::string_view name);  // text, json
const char* logLevelName(LogLevel level) noexcept;
const char* logFormatName(LogFormat format) noexcept;

// The most bytes of one field value a line holds: room for an error text naming a few objects of
// 253-character names; beyond it the value ends in "...(N bytes)".
inline constexpr std::size_t kMaxLogValueBytes = 4096;

struct Field {
  std::string key;
  std::string value;
};
using Fields = std::vector<Field>;

class Logger {
 public:
  using ClockFn = std::function<core::TimePoint()>;

  // Writes to `out` (not owned; must outlive the logger). `clock` defaults to the wall clock.
  Logger(std::ostream& out, LogFormat format, LogLevel minimum, ClockFn clock = {});

  bool enabled(LogLevel level) const noexcept { return level >= minimum_; }
  void log(LogLevel level, std::string_view message, const Fields& fields = {});
  void debug(std::string_view message, const Fields& fields = {}) { log(LogLevel::Debug, message, fields); }
  void info(std::string_view message, const Fields& fields = {}) { log(LogLevel::Info, message, fields); }
  void warn(std::string_view message, const Fields& fields = {}) { log(LogLevel::Warn, message, fields); }
  void error(std::string_view message, const Fields& fields = {}) { log(LogLevel::Error, message, fields); }

 private:
  std::ostream& out_;
  LogFormat format_;
  LogLevel minimum_;
  ClockFn clock_;
  std::mutex mutex_;
};

// One formatted line without the trailing newline (exposed for tests and for reuse).
std::string formatLogLine(LogFormat format, core::TimePoint time, LogLevel level, std::string_view message,
                          const Fields& fields);

}  // namespace restarter::obs
