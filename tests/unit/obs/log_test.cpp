#include "restarter/obs/log.hpp"

#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/base/rfc3339.hpp"

using namespace restarter;
using namespace restarter::obs;

namespace {
const core::TimePoint kTime = *base::parseRfc3339("2026-11-29T18:10:00.5Z");
}

TEST_CASE("text lines are a constant message and key=value fields", "[log]") {
  CHECK(formatLogLine(LogFormat::Text, kTime, LogLevel::Info, "restart triggered",
                      {{"workload", "default/web"},
                       {"cause", "configmap/a: u/1 -> u/2 (updated)"},
                       {"empty", ""},
                       {"quote", "say \"hi\""}}) ==
        "2026-11-29T18:10:00.500000Z INFO restart triggered workload=default/web "
        "cause=\"configmap/a: u/1 -> u/2 (updated)\" empty=\"\" quote=\"say \\\"hi\\\"\"");
}

TEST_CASE("json lines are one object with ts level msg and the fields", "[log]") {
  const std::string line = formatLogLine(LogFormat::Json, kTime, LogLevel::Warn, "webhook failed open",
                                         {{"reason", "deadline\nexceeded"}, {"bad-utf8", "\xff"}});
  const auto parsed = nlohmann::json::parse(line);
  CHECK(parsed["ts"] == "2026-11-29T18:10:00.500000Z");
  CHECK(parsed["level"] == "warn");
  CHECK(parsed["msg"] == "webhook failed open");
  CHECK(parsed["reason"] == "deadline\nexceeded");
  CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("the logger filters by level and never interleaves lines", "[log]") {
  std::ostringstream out;
  Logger logger(out, LogFormat::Text, LogLevel::Info, [] { return kTime; });
  logger.debug("hidden");
  logger.info("shown", {{"k", "v"}});
  CHECK(out.str() == "2026-11-29T18:10:00.500000Z INFO shown k=v\n");

  std::ostringstream many;
  Logger shared(many, LogFormat::Json, LogLevel::Debug, [] { return kTime; });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared, t] {
      for (int i = 0; i < 200; ++i) shared.info("line", {{"thread", std::to_string(t)}});
    });
  }
  for (auto& thread : threads) thread.join();
  std::istringstream lines(many.str());
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    CHECK(nlohmann::json::accept(line));
  }
  CHECK(count == 800);
}

TEST_CASE("log levels and formats parse from flags", "[log]") {
  CHECK(*parseLogLevel("debug") == LogLevel::Debug);
  CHECK(*parseLogLevel("error") == LogLevel::Error);
  CHECK_FALSE(parseLogLevel("verbose").ok());
  CHECK(*parseLogFormat("json") == LogFormat::Json);
  CHECK_FALSE(parseLogFormat("xml").ok());
  CHECK(std::string(logFormatName(LogFormat::Json)) == "json");
  CHECK(*parseLogFormat(logFormatName(LogFormat::Text)) == LogFormat::Text);
}

TEST_CASE("no field value makes a long line whatever its size or format", "[log]") {
  const std::string huge(2 << 20, 'n');
  std::string accents;
  for (int i = 0; i < 3000; ++i) accents += "\xc3\xa9";
  for (LogFormat format : {LogFormat::Text, LogFormat::Json}) {
    const std::string line = formatLogLine(format, kTime, LogLevel::Warn, "admission not patched",
                                           {{"name", huge}, {"detail", accents}, {"short", "ok"}});
    INFO(line.substr(0, 200));
    CHECK(line.size() < 3 * kMaxLogValueBytes);
    CHECK(line.find("...(2097152 bytes)") != std::string::npos);
    CHECK(line.find("...(6000 bytes)") != std::string::npos);
    CHECK(line.find(std::string(kMaxLogValueBytes, 'n')) != std::string::npos);
    CHECK(line.find(std::string(kMaxLogValueBytes + 1, 'n')) == std::string::npos);
    if (format == LogFormat::Json) {
      // Cut on a character boundary: still valid UTF-8, so it parses back.
      const auto parsed = nlohmann::json::parse(line);
      CHECK(parsed["short"] == "ok");
      CHECK(parsed["detail"].get<std::string>().rfind("\xc3\xa9...(6000 bytes)") != std::string::npos);
    }
  }
  // A value at the bound is kept whole.
  const std::string exact(kMaxLogValueBytes, 'e');
  CHECK(formatLogLine(LogFormat::Text, kTime, LogLevel::Info, "m", {{"v", exact}}).find("...(") ==
        std::string::npos);
}
