// The controller's wait for its digest key (docs/architecture.md, "Keyed digests"): a missing
// namespace or an invalid key is a readiness reason that says what to do, the retries back off from
// 2 s doubling to 60 s, the log warns at most once a minute, and an invalid key is one Warning
// Event on its Secret.
#include <atomic>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/controller/controller.hpp"
#include "restarter/testing/fake_api_server.hpp"
#include "restarter/testing/fake_clock.hpp"

using namespace restarter;
using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kKeyPath = "/api/v1/namespaces/restarter-system/secrets/restarter-digest-key";

constexpr const char* kSecretsPath = "/api/v1/namespaces/restarter-system/secrets";

enum class Mode { NoNamespace, InvalidKey };

std::string pathOf(const kube::Request& request) { return request.path.substr(0, request.path.find('?')); }

// The whole controller over the in-memory API server, run until it has read the key `attempts`
// times, so the test sees the schedule of a wait that would last for ever. NoNamespace: no Secret,
// and its create is refused as the apiserver refuses one into a missing namespace; InvalidKey: the
// Secret holds someone's hand-made key of 31 bytes.
struct Run {
  Run(Mode mode, int attempts) {
    auto fake = restarter::testing::connectFakeApi(clock, "ns");
    api = fake.server;
    client = std::move(fake.client);
    if (mode == Mode::InvalidKey) {
      api->seed(kube::resources::secrets(),
                {{"metadata",
                  {{"name", "restarter-digest-key"}, {"namespace", "restarter-system"}, {"uid", "key-uid"}}},
                 {"data", {{"key", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5aw=="}}}});
    }
    api->setInterceptor([this, mode, attempts](const kube::Request& request) -> std::optional<kube::Response> {
      if (request.method == "GET" && pathOf(request) == kKeyPath && ++gets >= attempts) stop.request_stop();
      if (mode == Mode::NoNamespace && request.method == "POST" && pathOf(request) == kSecretsPath) {
        return kube::Response{404,
                              {},
                              json{{"kind", "Status"},
                                   {"reason", "NotFound"},
                                   {"code", 404},
                                   {"message", "namespaces \"restarter-system\" not found"}}
                                  .dump()};
      }
      return std::nullopt;
    });
    ControllerOptions options;
    options.namespaces = {"ns"};
    options.identity = "me";
    controller = std::make_unique<Controller>(*client, options, logger, registry, clock);
    result = controller->run(stop.get_token());
  }
  std::size_t warnings() const {
    const std::string text = logs.str();
    std::size_t count = 0;
    for (std::size_t at = text.find("no digest key: not ready"); at != std::string::npos;
         at = text.find("no digest key: not ready", at + 1))
      ++count;
    return count;
  }

  std::stop_source stop;
  std::atomic<int> gets{0};
  restarter::testing::FakeClock clock;
  restarter::testing::FakeApiServer* api = nullptr;
  std::unique_ptr<kube::Client> client;
  std::ostringstream logs;
  obs::Logger logger{logs, obs::LogFormat::Text, obs::LogLevel::Debug};
  obs::Registry registry;
  std::unique_ptr<Controller> controller;
  core::Status result = core::okStatus();
};

}  // namespace

TEST_CASE("a missing digest key namespace is a readiness reason with a growing backoff and few warnings",
          "[controller][digest-key]") {
  // 12 attempts: 2+4+8+16+32 s, then 60 s each: about 8 minutes of waiting.
  Run run(Mode::NoNamespace, 12);
  CHECK(run.result.ok());  // stopped while waiting: not an error
  CHECK(run.controller->notReadyReason() ==
        "the digest key's namespace restarter-system does not exist: create namespace restarter-system or pass "
        "--digest-key-namespace");
  CHECK_FALSE(run.controller->synced());
  // Each attempt is followed by a wait; the 12th one is cut by the stop.
  const std::vector<std::chrono::milliseconds> expected{2s,  4s,  8s,  16s, 32s, 60s,
                                                        60s, 60s, 60s, 60s, 60s, 60s};
  CHECK(run.clock.waits() == expected);
  // The attempts come at 0, 2, 6, 14, 30, 62, 122, ... 422 s: one warning at the first, none again
  // before a minute has passed (62 s), then one each (122 ... 422 s): 8 in 7 minutes, not 212.
  CHECK(run.warnings() == 8);
  CHECK(run.logs.str().find("create namespace restarter-system or pass --digest-key-namespace") !=
        std::string::npos);
  // Nothing but the key's GET and create was sent (no reflector started, no Event).
  for (const kube::Request& request : run.api->requests()) {
    CAPTURE(request.method, request.path);
    CHECK(((request.method == "GET" && pathOf(request) == kKeyPath) ||
           (request.method == "POST" && pathOf(request) == kSecretsPath)));
  }
  CHECK(run.api->events().empty());
}

TEST_CASE("an invalid digest key is one Warning Event on its Secret and a readiness reason",
          "[controller][digest-key]") {
  Run run(Mode::InvalidKey, 5);
  CHECK(run.result.ok());
  const std::string reason = run.controller->notReadyReason();
  CHECK(reason.find("secret restarter-system/restarter-digest-key holds no valid digest key") == 0);
  CHECK(reason.find("(data.key must hold 32 bytes, holds 31)") != std::string::npos);  // the name once
  // The key's bytes never appear in the reason, the log or the Event.
  CHECK(reason.find("a2V5") == std::string::npos);
  CHECK(run.logs.str().find("a2V5") == std::string::npos);
  const auto events = run.api->events();
  REQUIRE(events.size() == 1);  // once per distinct problem, not per retry
  CHECK(events[0]["type"] == "Warning");
  CHECK(events[0]["reason"] == "InvalidDigestKey");
  CHECK(events[0]["regarding"]["kind"] == "Secret");
  CHECK(events[0]["regarding"]["name"] == "restarter-digest-key");
  CHECK(events[0]["regarding"]["uid"] == "key-uid");
  CHECK(events[0]["note"].get<std::string>().find("holds no valid digest key") != std::string::npos);
  CHECK(events[0]["note"].get<std::string>().find("a2V5") == std::string::npos);
  // The Secret is never overwritten.
  for (const kube::Request& request : run.api->requests()) {
    CAPTURE(request.method, request.path);
    CHECK(request.method != "PUT");
    CHECK_FALSE((request.method == "POST" && pathOf(request) == kSecretsPath));
  }
  CHECK(run.api->object(kube::resources::secrets(), "restarter-system", "restarter-digest-key")->at("data") ==
        json{{"key", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5aw=="}});
}

TEST_CASE("digestKeyAdvice says what to do for each problem with the key", "[controller][digest-key]") {
  const auto advice = [](core::ErrorKind kind, const std::string& message) {
    return kube::digestKeyAdvice(core::Error{kind, message, {}}, "sys", "key");
  };
  CHECK(advice(core::ErrorKind::NotFound, "namespace sys does not exist") ==
        "the digest key's namespace sys does not exist: create namespace sys or pass --digest-key-namespace");
  CHECK(advice(core::ErrorKind::NotFound, "secrets \"key\" not found").find("secret sys/key does not exist") ==
        0);
  CHECK(advice(core::ErrorKind::InvalidInput, "data.key must hold 32 bytes, holds 31") ==
        "secret sys/key holds no valid digest key (data.key must hold 32 bytes, holds 31): put the 32-byte key "
        "back, or delete the Secret to have a new one made");
  CHECK(
      advice(core::ErrorKind::Forbidden, "forbidden").find("grant the restarter-controller-digest-key Role") !=
      std::string::npos);
  CHECK(advice(core::ErrorKind::Unavailable, "connection refused").find("connection refused") !=
        std::string::npos);
}
