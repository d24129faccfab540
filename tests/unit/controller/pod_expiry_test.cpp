#include "restarter/controller/pod_expiry.hpp"

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/time.hpp"
#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace pod_expiry_test {

using namespace restarter::controller;
using nlohmann::json;
using restarter::cache::Store;
using namespace std::chrono_literals;

namespace {

json pod(json annotations) {
  return {{"metadata",
           {{"name", "p"},
            {"namespace", "ns"},
            {"uid", "pod-uid"},
            {"resourceVersion", "1"},
            {"annotations", annotations}}}};
}

std::string at(const restarter::base::Clock::WallTime& time) {
  return restarter::base::formatRfc3339(std::chrono::time_point_cast<std::chrono::microseconds>(time));
}

// The apiserver's answer to requests whose path contains `pathPart`: status `code` with `body`.
restarter::testing::FakeApiServer::Interceptor refuse(std::string pathPart, long code, std::string body) {
  return [pathPart = std::move(pathPart), code, body = std::move(body)](
             const restarter::kube::Request& request) -> std::optional<restarter::kube::Response> {
    if (request.path.find(pathPart) == std::string::npos) return std::nullopt;
    return restarter::kube::Response{code, {}, body};
  };
}

const char* const kBudgetRefusal =
    R"({"kind":"Status","reason":"TooManyRequests","message":"Cannot evict pod as it would violate the pod's disruption budget.","code":429})";

struct Fixture {
  explicit Fixture(bool dryRun = false)
      : harness(dryRun), reconciler([this](std::string_view) { return &pods; }, *harness.context) {}
  restarter::controller::testing::Harness harness;
  Store pods;
  PodExpiryReconciler reconciler;

  restarter::testing::FakeApiServer& api() { return *harness.api; }
  // The pod, in the API server and in the cache.
  void seed(const json& pod) {
    api().seed(restarter::kube::resources::pods(), pod);
    pods.replace({pod}, "1");
  }
  bool podStored() const {
    return harness.api->object(restarter::kube::resources::pods(), "ns", "p").has_value();
  }
};

}  // namespace

TEST_CASE("a pod whose time has come is evicted with its uid as precondition", "[controller][expiry]") {
  Fixture f;
  const std::string expiry = at(f.harness.clock.wallNow() - 1s);
  f.seed(pod({{"restarter.stackable.tech/expires-at.tls", expiry}}));
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  CHECK_FALSE(f.podStored());
  const auto requests = f.api().requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests[0].path == "/api/v1/namespaces/ns/pods/p/eviction");
  CHECK(json::parse(requests[0].body)["deleteOptions"]["preconditions"]["uid"] == "pod-uid");
  CHECK(f.harness.metrics.evictions.with({"evicted"}).value() == 1);
  // The Event on the pod says why it went: the annotation and its time.
  auto recorded = f.api().events();
  REQUIRE(recorded.size() == 1);
  const json& event = recorded[0];
  CHECK(event["type"] == "Normal");
  CHECK(event["reason"] == "Expired");
  CHECK(event["regarding"]["kind"] == "Pod");
  CHECK(event["regarding"]["name"] == "p");
  CHECK(event["regarding"]["uid"] == "pod-uid");
  const std::string note = event["note"];
  CHECK(note.find("restarter.stackable.tech/expires-at.tls") != std::string::npos);
  CHECK(note.find(expiry) != std::string::npos);
}

TEST_CASE("an eviction whose Event cannot be written is still done and not retried", "[controller][expiry]") {
  Fixture f;
  f.seed(pod({{"restarter.stackable.tech/expires-at.tls", at(f.harness.clock.wallNow() - 1s)}}));
  f.api().setInterceptor(
      refuse("/events", 403, R"({"kind":"Status","reason":"Forbidden","message":"no","code":403})"));
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  CHECK_FALSE(f.podStored());
  CHECK(f.api().events().empty());
  CHECK(f.harness.logs.str().find("WARN cannot record event") != std::string::npos);
}

TEST_CASE("the earliest expiry in the future is waited for", "[controller][expiry]") {
  Fixture f;
  f.seed(pod({{"restarter.stackable.tech/expires-at.a", at(f.harness.clock.wallNow() + 90s)},
              {"restarter.stackable.tech/expires-at.b", at(f.harness.clock.wallNow() + 30s)}}));
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  REQUIRE(action->requeueAfter);
  CHECK(*action->requeueAfter == 30s);
  CHECK(f.api().requests().empty());
  CHECK(f.podStored());
}

TEST_CASE("a PodDisruptionBudget refusal is retried later and calmly", "[controller][expiry]") {
  Fixture f;
  f.seed(pod({{"restarter.stackable.tech/expires-at.tls", at(f.harness.clock.wallNow())}}));
  f.api().setInterceptor(refuse("/eviction", 429, kBudgetRefusal));
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  REQUIRE(action->requeueAfter);
  CHECK(*action->requeueAfter == kEvictionRefusedRetry);
  CHECK(f.harness.logs.str().find("INFO pod eviction refused") != std::string::npos);
  auto recorded = f.api().events();
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0]["type"] == "Warning");
  CHECK(recorded[0]["reason"] == "EvictionBlocked");
  CHECK(recorded[0]["note"].get<std::string>().find("disruption budget") != std::string::npos);

  // Refused again at every retry: no further Event until the interval has passed.
  for (milliseconds waited{0}; waited + kEvictionRefusedRetry < kEvictionBlockedEventInterval;
       waited += kEvictionRefusedRetry) {
    f.harness.clock.advance(kEvictionRefusedRetry);
    REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  }
  CHECK(f.api().events().size() == 1);
  f.harness.clock.advance(kEvictionRefusedRetry);
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  CHECK(f.api().events().size() == 2);
  CHECK(f.podStored());
}

TEST_CASE("an unparseable expiry is logged once and skipped", "[controller][expiry]") {
  Fixture f;
  f.seed(pod({{"restarter.stackable.tech/expires-at.bad", "tomorrow"}}));
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  const std::string logs = f.harness.logs.str();
  const auto first = logs.find("unparseable");
  REQUIRE(first != std::string::npos);
  CHECK(logs.find("unparseable", first + 1) == std::string::npos);
  CHECK(f.api().requests().empty());
}

TEST_CASE("dry run evicts nothing", "[controller][expiry]") {
  Fixture f(true);
  f.seed(pod({{"restarter.stackable.tech/expires-at.tls", at(f.harness.clock.wallNow() - 1s)}}));
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  // Recorded once (Event WouldEvict), never evicted.
  CHECK(f.podStored());
  const auto recorded = f.api().events();
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0]["reason"] == "WouldEvict");
  CHECK(f.harness.logs.str().find("pod eviction planned (dry run") != std::string::npos);
}

}  // namespace pod_expiry_test
