// The controller's wait for its digest key (docs/architecture.md, "Keyed digests"): a missing
// namespace or an invalid key is a readiness reason that says what to do, the retries back off from
// 2 s doubling to 60 s, the log warns at most once a minute, and an invalid key is one Warning
// Event on its Secret.
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/controller/controller.hpp"
#include "restarter/testing/fake_clock.hpp"
#include "support.hpp"

using namespace restarter;
using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kKeyPath = "/api/v1/namespaces/restarter-system/secrets/restarter-digest-key";

// Answers only the key Secret's GET and create and Events; stops the run after `attempts` GETs of
// the key, so the test sees the schedule of a wait that would last for ever.
class KeyApi final : public kube::Transport {
 public:
  enum class Mode { NoNamespace, InvalidKey };
  KeyApi(Mode mode, int attempts, std::stop_source stop)
      : mode_(mode), attempts_(attempts), stop_(std::move(stop)) {}

  core::Result<kube::Response> send(const kube::Request& request) override {
    const std::string path = request.path.substr(0, request.path.find('?'));
    std::lock_guard lock(mutex_);
    log_.push_back(request.method + " " + path);
    if (request.method == "GET" && path == kKeyPath) {
      if (++gets_ >= attempts_) stop_.request_stop();
      if (mode_ == Mode::NoNamespace)
        return status(404, "NotFound", "secrets \"restarter-digest-key\" not found");
      // 31 bytes: someone's hand-made key. A metadata-only GET (the Event's) gets the metadata.
      bool metadataOnly = false;
      for (const auto& [name, value] : request.headers) {
        if (name == "Accept" && value.find("as=PartialObjectMetadata") != std::string::npos)
          metadataOnly = true;
      }
      if (metadataOnly) {
        return kube::Response{
            200,
            {},
            json{{"apiVersion", "meta.k8s.io/v1"},
                 {"kind", "PartialObjectMetadata"},
                 {"metadata",
                  {{"name", "restarter-digest-key"}, {"namespace", "restarter-system"}, {"uid", "key-uid"}}}}
                .dump()};
      }
      return kube::Response{
          200,
          {},
          json{{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"metadata",
                {{"name", "restarter-digest-key"}, {"namespace", "restarter-system"}, {"uid", "key-uid"}}},
               {"data", {{"key", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5aw=="}}}}
              .dump()};
    }
    if (request.method == "POST" && path == "/api/v1/namespaces/restarter-system/secrets") {
      return status(404, "NotFound", "namespaces \"restarter-system\" not found");
    }
    if (request.method == "POST" && path.find("/events") != std::string::npos) {
      events_.push_back(json::parse(request.body));
      return kube::Response{201, {}, json{{"kind", "Event"}, {"metadata", {{"name", "e"}}}}.dump()};
    }
    return status(405, "MethodNotAllowed", "unexpected");
  }
  core::Result<kube::Response> stream(const kube::Request&, const kube::ChunkHandler&,
                                      std::stop_token) override {
    return status(405, "MethodNotAllowed", "no watches here");
  }

  std::vector<json> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::vector<std::string> log() const {
    std::lock_guard lock(mutex_);
    return log_;
  }

 private:
  static core::Result<kube::Response> status(long code, const std::string& reason, const std::string& message) {
    return kube::Response{
        code, {}, json{{"kind", "Status"}, {"reason", reason}, {"code", code}, {"message", message}}.dump()};
  }

  mutable std::mutex mutex_;
  Mode mode_;
  int attempts_;
  int gets_ = 0;
  std::stop_source stop_;
  std::vector<std::string> log_;
  std::vector<json> events_;
};

struct Run {
  Run(KeyApi::Mode mode, int attempts) {
    auto transport = std::make_unique<KeyApi>(mode, attempts, stop);
    api = transport.get();
    client = std::make_unique<kube::Client>(
        std::move(transport), std::make_unique<restarter::controller::testing::NoAuth>(), "ns", clock);
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
  restarter::testing::FakeClock clock;
  KeyApi* api = nullptr;
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
  Run run(KeyApi::Mode::NoNamespace, 12);
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
  for (const std::string& line : run.api->log()) {
    CAPTURE(line);
    CHECK(
        (line == std::string("GET ") + kKeyPath || line == "POST /api/v1/namespaces/restarter-system/secrets"));
  }
  CHECK(run.api->events().empty());
}

TEST_CASE("an invalid digest key is one Warning Event on its Secret and a readiness reason",
          "[controller][digest-key]") {
  Run run(KeyApi::Mode::InvalidKey, 5);
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
  for (const std::string& line : run.api->log()) CHECK(line.rfind("PUT", 0) != 0);
  for (const std::string& line : run.api->log())
    CHECK(line != "POST /api/v1/namespaces/restarter-system/secrets");
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
