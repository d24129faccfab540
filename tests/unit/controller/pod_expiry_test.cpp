#include "restarter/controller/pod_expiry.hpp"

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/time.hpp"
#include "support.hpp"

using namespace restarter::controller;
using nlohmann::json;
using restarter::cache::Store;
using restarter::kube::testing::ok;
using restarter::kube::testing::status;
using restarter::testing::eventAnswer;
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

// The events.k8s.io Events the requests created, as parsed bodies.
std::vector<json> events(const std::vector<restarter::kube::Request>& requests) {
  std::vector<json> out;
  for (const auto& request : requests) {
    if (request.method == "POST" && request.path.find("/events") != std::string::npos)
      out.push_back(json::parse(request.body));
  }
  return out;
}

struct Fixture {
  explicit Fixture(bool dryRun = false)
      : harness(dryRun), reconciler([this](std::string_view) { return &pods; }, *harness.context) {}
  restarter::controller::testing::Harness harness;
  Store pods;
  PodExpiryReconciler reconciler;
};

}  // namespace

TEST_CASE("a pod whose time has come is evicted with its uid as precondition", "[controller][expiry]") {
  Fixture f;
  const std::string expiry = at(f.harness.clock.wallNow() - 1s);
  f.pods.replace({pod({{"restarter.stackable.tech/expires-at.tls", expiry}})}, "1");
  f.harness.transport->push(ok(R"({"kind":"Status","status":"Success"})"));
  f.harness.transport->push(ok(eventAnswer().dump()));
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].path == "/api/v1/namespaces/ns/pods/p/eviction");
  CHECK(requests[0].body.find("pod-uid") != std::string::npos);
  CHECK(f.harness.metrics.evictions.with({"evicted"}).value() == 1);
  // The Event on the pod says why it went: the annotation and its time.
  auto recorded = events(requests);
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
  f.pods.replace({pod({{"restarter.stackable.tech/expires-at.tls", at(f.harness.clock.wallNow() - 1s)}})}, "1");
  f.harness.transport->push(ok(R"({"kind":"Status","status":"Success"})"));
  f.harness.transport->push(status(403, R"({"kind":"Status","reason":"Forbidden","message":"no","code":403})"));
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  CHECK(f.harness.logs.str().find("WARN cannot record event") != std::string::npos);
}

TEST_CASE("the earliest expiry in the future is waited for", "[controller][expiry]") {
  Fixture f;
  f.pods.replace({pod({{"restarter.stackable.tech/expires-at.a", at(f.harness.clock.wallNow() + 90s)},
                       {"restarter.stackable.tech/expires-at.b", at(f.harness.clock.wallNow() + 30s)}})},
                 "1");
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  REQUIRE(action->requeueAfter);
  CHECK(*action->requeueAfter == 30s);
  CHECK(f.harness.transport->requests().empty());
}

TEST_CASE("a PodDisruptionBudget refusal is retried later and calmly", "[controller][expiry]") {
  Fixture f;
  f.pods.replace({pod({{"restarter.stackable.tech/expires-at.tls", at(f.harness.clock.wallNow())}})}, "1");
  f.harness.transport->push(status(
      429,
      R"({"kind":"Status","reason":"TooManyRequests","message":"Cannot evict pod as it would violate the pod's disruption budget.","code":429})"));
  f.harness.transport->push(ok(eventAnswer().dump()));
  auto action = f.reconciler.reconcile({"ns", "p"});
  REQUIRE(action.ok());
  REQUIRE(action->requeueAfter);
  CHECK(*action->requeueAfter == kEvictionRefusedRetry);
  CHECK(f.harness.logs.str().find("INFO pod eviction refused") != std::string::npos);
  auto recorded = events(f.harness.transport->requests());
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0]["type"] == "Warning");
  CHECK(recorded[0]["reason"] == "EvictionBlocked");
  CHECK(recorded[0]["note"].get<std::string>().find("disruption budget") != std::string::npos);

  // Refused again at every retry: no further Event until the interval has passed.
  const auto refusal = [&] {
    f.harness.transport->push(
        status(429, R"({"kind":"Status","reason":"TooManyRequests","message":"budget","code":429})"));
  };
  for (milliseconds waited{0}; waited + kEvictionRefusedRetry < kEvictionBlockedEventInterval;
       waited += kEvictionRefusedRetry) {
    f.harness.clock.advance(kEvictionRefusedRetry);
    refusal();
    REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  }
  CHECK(events(f.harness.transport->requests()).size() == 1);
  f.harness.clock.advance(kEvictionRefusedRetry);
  refusal();
  f.harness.transport->push(ok(eventAnswer().dump()));
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  CHECK(events(f.harness.transport->requests()).size() == 2);
  CHECK(f.harness.transport->remaining() == 0);
}

TEST_CASE("an unparseable expiry is logged once and skipped", "[controller][expiry]") {
  Fixture f;
  f.pods.replace({pod({{"restarter.stackable.tech/expires-at.bad", "tomorrow"}})}, "1");
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  const std::string logs = f.harness.logs.str();
  const auto first = logs.find("unparseable");
  REQUIRE(first != std::string::npos);
  CHECK(logs.find("unparseable", first + 1) == std::string::npos);
  CHECK(f.harness.transport->requests().empty());
}

TEST_CASE("dry run evicts nothing", "[controller][expiry]") {
  Fixture f(true);
  f.pods.replace({pod({{"restarter.stackable.tech/expires-at.tls", at(f.harness.clock.wallNow() - 1s)}})}, "1");
  f.harness.transport->push(ok(eventAnswer().dump()));
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  REQUIRE(f.reconciler.reconcile({"ns", "p"}).ok());
  // Recorded once (Event WouldEvict), never evicted.
  auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path.find("/eviction") == std::string::npos);
  CHECK(events(requests).at(0)["reason"] == "WouldEvict");
  CHECK(f.harness.logs.str().find("pod eviction planned (dry run") != std::string::npos);
}
