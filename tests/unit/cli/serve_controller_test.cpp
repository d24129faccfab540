#include "restarter/cli/serve_controller.hpp"

#include <sstream>

#include <catch2/catch.hpp>

using namespace restarter::cli;
using namespace std::chrono_literals;

namespace {
struct Run {
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  ServeControllerOptions options;
  std::optional<int> exit;
  explicit Run(const std::vector<std::string>& args) { exit = parseServeControllerFlags(args, io, options); }
};

// Each of `values` given to `--FLAG` is refused: exit 2, the problem named with the flag.
void checkRefused(const std::string& flag, std::initializer_list<const char*> values) {
  for (const char* bad : values) {
    INFO("--" << flag << " " << bad);
    Run run({"--" + flag, bad});
    REQUIRE(run.exit);
    CHECK(*run.exit == 2);
    CHECK_THAT(run.err.str(), Catch::StartsWith("restarter serve-controller: --" + flag + ": "));
  }
}
}  // namespace

TEST_CASE("serve-controller defaults", "[cli][serve-controller]") {
  Run run({});
  CHECK_FALSE(run.exit);
  CHECK(run.options.controller.namespaces.empty());
  CHECK(run.options.controller.debounce == 1000ms);
  CHECK(run.options.controller.minRolloutInterval == 5min);
  CHECK(run.options.controller.writesPerSecond == 10.0);
  CHECK(run.options.controller.writeBurst == 50);
  CHECK(run.options.controller.digestKey.namespace_ == "restarter-system");
  CHECK_FALSE(run.options.controller.dryRun);
  CHECK_FALSE(run.options.leaderElect);
  REQUIRE(run.options.metricsBind);
  CHECK(run.options.metricsBind->port == 8080);
  REQUIRE(run.options.healthBind);
  CHECK(run.options.healthBind->port == 8081);
}

TEST_CASE("serve-controller namespaces repeat and split on commas", "[cli][serve-controller]") {
  Run run({"--namespace", "a,b", "-n", "c", "--namespace=a"});
  CHECK_FALSE(run.exit);
  CHECK(run.options.controller.namespaces == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("serve-controller flags are read", "[cli][serve-controller]") {
  Run run({"--debounce", "250ms", "--dry-run", "--leader-elect=false", "--metrics-bind-address", "0",
           "--health-probe-bind-address", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug"});
  CHECK_FALSE(run.exit);
  CHECK(run.options.controller.debounce == 250ms);
  CHECK(run.options.controller.dryRun);
  CHECK(run.options.leaderElect == std::optional<bool>(false));
  CHECK_FALSE(run.options.metricsBind);
  REQUIRE(run.options.healthBind);
  CHECK(run.options.healthBind->host == "127.0.0.1");
  CHECK(run.options.logFormat == restarter::obs::LogFormat::Json);
  CHECK(Run({"--leader-elect"}).options.leaderElect == std::optional<bool>(true));
  // The controller's settings land in its options, which the program passes on whole.
  Run limits({"--max-writes-per-second", "2.5", "--write-burst", "7", "--digest-key-namespace", "ops"});
  CHECK_FALSE(limits.exit);
  CHECK(limits.options.controller.writesPerSecond == 2.5);
  CHECK(limits.options.controller.writeBurst == 7);
  CHECK(limits.options.controller.digestKey.namespace_ == "ops");
}

TEST_CASE("serve-controller --leader-elect is a bool as in controller-runtime", "[cli][serve-controller]") {
  CHECK(Run({"--leader-elect=true"}).options.leaderElect == std::optional<bool>(true));
  CHECK(Run({"--leader-elect=false"}).options.leaderElect == std::optional<bool>(false));
  CHECK(Run({"--leader-elect=0"}).options.leaderElect == std::optional<bool>(false));
  // A bool flag takes its value only after "=": "false" here is an argument, refused.
  Run separate({"--leader-elect", "false"});
  REQUIRE(separate.exit);
  CHECK(*separate.exit == 2);
  Run maybe({"--leader-elect=maybe"});
  REQUIRE(maybe.exit);
  CHECK_THAT(maybe.err.str(), Catch::Contains("invalid value \"maybe\" for --leader-elect"));
}

TEST_CASE("serve-controller --dry-run=false writes", "[cli][serve-controller]") {
  CHECK(Run({"--dry-run"}).options.controller.dryRun);
  CHECK_FALSE(Run({"--dry-run=false"}).options.controller.dryRun);
  CHECK_FALSE(Run({"--roll-on-opt-in=false"}).options.controller.rollOnOptIn);
}

TEST_CASE("serve-controller --health-bind-address still works and warns", "[cli][serve-controller]") {
  Run old({"--health-bind-address", "127.0.0.1:9"});
  CHECK_FALSE(old.exit);
  REQUIRE(old.options.healthBind);
  CHECK(old.options.healthBind->port == 9);
  CHECK(old.err.str() ==
        "Flag --health-bind-address has been deprecated, use --health-probe-bind-address instead\n");
  Run both({"--health-bind-address", ":9", "--health-probe-bind-address", ":10"});
  REQUIRE(both.exit);
  CHECK(*both.exit == 2);
  CHECK_THAT(both.err.str(), Catch::Contains("give --health-probe-bind-address only"));
  Run current({"--health-probe-bind-address", ":10"});
  CHECK(current.err.str().empty());
}

TEST_CASE("serve-controller refuses bad values with exit 2", "[cli][serve-controller]") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--debounce", "soon"},
                                                                {"--leader-elect=maybe"},
                                                                {"--log-format", "xml"},
                                                                {"--metrics-bind-address", "nohost"},
                                                                {"--namespace", ","},
                                                                {"--write-burst", "0"},
                                                                {"extra"}}) {
    Run run(args);
    REQUIRE(run.exit);
    CHECK(*run.exit == 2);
    CHECK(run.err.str().find("serve-controller") != std::string::npos);
  }
}

TEST_CASE("serve-controller --debounce accepts 0 and milliseconds up to an hour", "[cli][serve-controller]") {
  CHECK(Run({"--debounce", "0"}).options.controller.debounce == 0ms);
  CHECK(Run({"--debounce", "1500ms"}).options.controller.debounce == 1500ms);
  CHECK(Run({"--debounce", "2s"}).options.controller.debounce == 2000ms);
  CHECK(Run({"--debounce", "1m30s250ms"}).options.controller.debounce == 90250ms);
  checkRefused("debounce", {"-1s", "2h", "1.5s", "5"});
  CHECK_THAT(Run({"--debounce", "2h"}).err.str(), Catch::Contains("must be at most 1h"));
}

TEST_CASE("serve-controller --min-rollout-interval takes 0 and durations up to a day",
          "[cli][serve-controller]") {
  CHECK(Run({"--min-rollout-interval", "20s"}).options.controller.minRolloutInterval == 20s);
  CHECK(Run({"--min-rollout-interval=0"}).options.controller.minRolloutInterval == 0ms);
  CHECK(Run({"--min-rollout-interval", "1500ms"}).options.controller.minRolloutInterval == 1500ms);
  CHECK(Run({"--min-rollout-interval", "24h"}).options.controller.minRolloutInterval == 24h);
  // The last value given wins (kuttl's helper passes a default that a suite overrides).
  CHECK(Run({"--min-rollout-interval", "0", "--min-rollout-interval", "20s"})
            .options.controller.minRolloutInterval == 20s);
  checkRefused("min-rollout-interval", {"soon", "-1s", "25h", "1.5s"});
  CHECK_THAT(Run({"--min-rollout-interval", "25h"}).err.str(), Catch::Contains("must be at most 24h"));
  Run help({"--help"});
  CHECK(help.exit == std::optional<int>(0));
  CHECK_THAT(help.out.str(), Catch::Contains("--min-rollout-interval") && Catch::Contains("(default: 5m)"));
}

TEST_CASE("serve-controller --max-concurrent-rollouts takes 0 or a count and needs an interval",
          "[cli][serve-controller]") {
  CHECK(Run({}).options.controller.maxConcurrentRollouts == 0);
  CHECK(Run({"--max-concurrent-rollouts", "5"}).options.controller.maxConcurrentRollouts == 5);
  CHECK(Run({"--max-concurrent-rollouts=100000"}).options.controller.maxConcurrentRollouts == 100000);
  CHECK(Run({"--max-concurrent-rollouts", "0", "--min-rollout-interval", "0"}).exit == std::nullopt);
  for (const char* bad : {"-1", "100001", "many", "1.5", "99999999999999999999"}) {
    INFO(bad);
    Run refused({"--max-concurrent-rollouts", bad});
    CHECK(refused.exit == std::optional<int>(2));
    CHECK_THAT(refused.err.str(), Catch::Contains("--max-concurrent-rollouts"));
  }
  Run noInterval({"--max-concurrent-rollouts", "5", "--min-rollout-interval", "0"});
  CHECK(noInterval.exit == std::optional<int>(2));
  CHECK_THAT(noInterval.err.str(),
             Catch::Contains("--max-concurrent-rollouts needs --min-rollout-interval above 0"));
  CHECK_THAT(Run({"--help"}).out.str(),
             Catch::Contains("--max-concurrent-rollouts") && Catch::Contains("0: no limit"));
}

TEST_CASE("serve-controller --ondelete-ready-timeout takes a positive duration", "[cli][serve-controller]") {
  CHECK(Run({}).options.controller.onDeleteReadyTimeout == 10min);
  CHECK(Run({"--ondelete-ready-timeout", "20s"}).options.controller.onDeleteReadyTimeout == 20s);
  CHECK(Run({"--ondelete-ready-timeout=1h"}).options.controller.onDeleteReadyTimeout == 1h);
  checkRefused("ondelete-ready-timeout", {"0", "0s", "soon", "-1s", "1500ms"});
  CHECK_THAT(Run({"--help"}).out.str(), Catch::Contains("--ondelete-ready-timeout"));
}

TEST_CASE("serve-controller reads Reloader's annotations only when asked",
          "[cli][serve-controller][reloader]") {
  Run off({});
  CHECK_FALSE(off.options.controller.selection.reloaderAnnotations);
  CHECK_FALSE(off.options.controller.selection.autoReloadAll);
  Run on({"--reloader-annotations", "--auto-reload-all"});
  CHECK_FALSE(on.exit);
  CHECK(on.options.controller.selection.reloaderAnnotations);
  CHECK(on.options.controller.selection.autoReloadAll);
  Run explicitOff({"--reloader-annotations=false"});
  CHECK_FALSE(explicitOff.exit);
  CHECK_FALSE(explicitOff.options.controller.selection.reloaderAnnotations);
  // --auto-reload-all alone would select nothing and say nothing.
  Run alone({"--auto-reload-all"});
  CHECK(alone.exit == kExitUsage);
  CHECK(alone.err.str().find("--auto-reload-all needs --reloader-annotations") != std::string::npos);
}
