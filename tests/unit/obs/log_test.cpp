#include "restarter/obs/log.hpp"

#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter;
using namespace restarter::obs;

namespace {
const core::TimePoint kTime = *core::parseRfc3339("2026-11-29T18:10:00.5Z");
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
}
