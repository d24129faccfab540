#include "restarter/controller/ondelete.hpp"

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/time.hpp"
#include "support.hpp"

using namespace restarter::controller;
using nlohmann::json;
using restarter::kube::testing::ok;
using restarter::kube::testing::status;
using restarter::testing::eventAnswer;
using namespace std::chrono_literals;

namespace {

const WorkloadResource& kindNamed(const std::string& name) {
  for (const WorkloadResource& kind : workloadResources()) {
    if (kind.name == name) return kind;
  }
  throw std::logic_error("no kind " + name);
}

std::string at(restarter::base::Clock::WallTime time) {
  return restarter::base::formatRfc3339(std::chrono::time_point_cast<std::chrono::microseconds>(time));
}

// "web" (restarter/testing/builders.hpp) of three replicas with update strategy `strategy`, generation 2
// observed, updating to revision web-new.
json rollingStatefulSet(const std::string& strategy = "OnDelete") {
  return restarter::testing::statefulSet(
      {{"metadata", {{"resourceVersion", "5"}, {"generation", 2}}},
       {"spec",
        {{"replicas", 3},
         {"selector", {{"matchLabels", {{"app", "web"}}}}},
         {"updateStrategy", {{"type", strategy}}}}},
       {"status", {{"observedGeneration", 2}, {"updateRevision", "web-new"}}}});
}

struct PodState {
  PodState(std::string n, std::string r, bool isReady = true, bool isTerminating = false,
           std::string ownerUid = "sts-uid", std::string nodeName = "")
      : name(std::move(n)),
        revision(std::move(r)),
        ready(isReady),
        terminating(isTerminating),
        owner(std::move(ownerUid)),
        node(std::move(nodeName)) {}
  std::string name;
  std::string revision;
  bool ready;
  bool terminating;
  std::string owner;
  std::string node;
};

json pod(const PodState& p, restarter::base::Clock::WallTime since) {
  json out = {{"metadata",
               {{"name", p.name},
                {"namespace", "ns"},
                {"uid", p.name + "-uid"},
                {"creationTimestamp", at(since)},
                {"labels", {{"app", "web"}, {"controller-revision-hash", p.revision}}},
                {"ownerReferences", json::array({{{"uid", p.owner}, {"controller", true}}})}}},
              {"spec", {{"nodeName", p.node}}},
              {"status",
               {{"conditions", json::array({{{"type", "Ready"},
                                             {"status", p.ready ? "True" : "False"},
                                             {"lastTransitionTime", at(since)}}})}}}};
  if (p.terminating) out["metadata"]["deletionTimestamp"] = at(since);
  return out;
}

json podList(const std::vector<json>& pods) {
  return {{"apiVersion", "v1"}, {"kind", "PodList"}, {"metadata", {{"resourceVersion", "9"}}}, {"items", pods}};
}

std::vector<json> events(const std::vector<restarter::kube::Request>& requests) {
  std::vector<json> out;
  for (const auto& request : requests) {
    if (request.method == "POST" && request.path.find("/events") != std::string::npos)
      out.push_back(json::parse(request.body));
  }
  return out;
}

std::vector<std::string> evictions(const std::vector<restarter::kube::Request>& requests) {
  std::vector<std::string> out;
  for (const auto& request : requests) {
    if (request.method == "POST" && request.path.find("/eviction") != std::string::npos)
      out.push_back(request.path);
  }
  return out;
}

struct Fixture {
  explicit Fixture(bool dryRun = false, const std::string& kind = "statefulset")
      : harness(dryRun),
        evictor(*harness.context),
        roller(
            kindNamed(kind), [this](std::string_view) { return &workloads; }, *harness.context, evictor,
            std::chrono::seconds(60)) {}
  restarter::controller::testing::Harness harness;
  restarter::cache::PackedStore workloads;
  Evictor evictor;
  OnDeleteRoller roller;

  void pods(const std::vector<PodState>& states, restarter::base::Clock::WallTime since) {
    std::vector<json> items;
    for (const PodState& state : states) items.push_back(pod(state, since));
    harness.transport->push(ok(podList(items).dump()));
  }
};

}  // namespace

TEST_CASE("the roll evicts the highest outdated ordinal with its uid and announces it",
          "[controller][ondelete]") {
  Fixture f;
  f.workloads.replace({rollingStatefulSet()}, "1");
  const auto hourAgo = f.harness.clock.wallNow() - 1h;
  // web-9 is another owner's pod that the selector also matches: never counted, never evicted.
  f.pods(
      {{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-old"}, {"web-9", "x", true, false, "other"}},
      hourAgo);
  f.harness.transport->push(ok(R"({"kind":"Status","status":"Success"})"));
  f.harness.transport->push(ok(eventAnswer().dump()));
  auto action = f.roller.reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(action->requeueAfter == kRollPoll);
  const auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].method == "GET");
  CHECK(requests[0].path.find("/api/v1/namespaces/ns/pods") == 0);
  CHECK(requests[0].path.find("labelSelector=app%3Dweb") != std::string::npos);
  CHECK(evictions(requests) == std::vector<std::string>{"/api/v1/namespaces/ns/pods/web-2/eviction"});
  CHECK(json::parse(requests[1].body)["deleteOptions"]["preconditions"]["uid"] == "web-2-uid");
  const auto recorded = events(requests);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0]["reason"] == "Evicted");
  CHECK(recorded[0]["type"] == "Normal");
  CHECK(recorded[0]["regarding"]["name"] == "web-2");
  CHECK(recorded[0]["note"].get<std::string>().find("web-old -> web-new") != std::string::npos);
  CHECK(f.harness.metrics.rollEvictions.with({"statefulset", "evicted"}).value() == 1);
  CHECK(f.harness.metrics.outdatedPods.with({"statefulset"}).value() == 3);
}

TEST_CASE("the roll waits while a replacement is on its way with one list and no eviction",
          "[controller][ondelete]") {
  Fixture f;
  f.workloads.replace({rollingStatefulSet()}, "1");
  const auto now = f.harness.clock.wallNow();
  SECTION("terminating") {
    f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-old", false, true}}, now);
  }
  SECTION("missing") { f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}}, now); }
  SECTION("not Ready yet") {
    f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-new", false}}, now - 10s);
  }
  auto action = f.roller.reconcile({"ns", "web"});
  REQUIRE(action.ok());
  REQUIRE(action->requeueAfter);
  CHECK(*action->requeueAfter <= kRollPoll);
  CHECK(f.harness.transport->requests().size() == 1);
  CHECK(f.harness.metrics.outdatedPods.with({"statefulset"}).value() == 2);
}

TEST_CASE("a replacement not Ready within the timeout pauses the roll with one Warning",
          "[controller][ondelete]") {
  Fixture f;
  f.workloads.replace({rollingStatefulSet()}, "1");
  const auto longAgo = f.harness.clock.wallNow() - 61s;
  f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-new", false}}, longAgo);
  f.harness.transport->push(ok(eventAnswer().dump()));
  f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-new", false}}, longAgo);
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  const auto requests = f.harness.transport->requests();
  CHECK(evictions(requests).empty());
  const auto recorded = events(requests);
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0]["reason"] == "RollPaused");
  CHECK(recorded[0]["type"] == "Warning");
  CHECK(recorded[0]["regarding"]["kind"] == "StatefulSet");
  CHECK(recorded[0]["note"].get<std::string>().find("web-2") != std::string::npos);
}

TEST_CASE("dry run announces each eviction it would make once in roll order and evicts nothing",
          "[controller][ondelete]") {
  Fixture f(true);
  f.workloads.replace({rollingStatefulSet()}, "1");
  const auto hourAgo = f.harness.clock.wallNow() - 1h;
  // web-1 already runs the update revision: only the two others would be evicted.
  f.pods({{"web-0", "web-old"}, {"web-1", "web-new"}, {"web-2", "web-old"}}, hourAgo);
  f.harness.transport->push(ok(eventAnswer().dump()));
  f.harness.transport->push(ok(eventAnswer().dump()));
  f.pods({{"web-0", "web-old"}, {"web-1", "web-new"}, {"web-2", "web-old"}}, hourAgo);
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  const auto requests = f.harness.transport->requests();
  CHECK(evictions(requests).empty());
  const auto recorded = events(requests);
  REQUIRE(recorded.size() == 2);
  CHECK(recorded[0]["reason"] == "WouldEvict");
  CHECK(recorded[0]["regarding"]["name"] == "web-2");
  CHECK(recorded[0]["note"].get<std::string>().find("web-old -> web-new") != std::string::npos);
  CHECK(recorded[1]["reason"] == "WouldEvict");
  CHECK(recorded[1]["regarding"]["name"] == "web-0");
  CHECK(f.harness.metrics.rollEvictions.with({"statefulset", "dry_run"}).value() == 2);
}

TEST_CASE("a PodDisruptionBudget refusal is retried after the backoff with one EvictionBlocked",
          "[controller][ondelete]") {
  Fixture f;
  f.workloads.replace({rollingStatefulSet()}, "1");
  const auto hourAgo = f.harness.clock.wallNow() - 1h;
  for (int attempt = 0; attempt < 2; ++attempt) {
    f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-old"}}, hourAgo);
    f.harness.transport->push(status(429, R"({"kind":"Status","status":"Failure","reason":"TooManyRequests",
        "message":"Cannot evict pod as it would violate the pod's disruption budget.","code":429})"));
    if (attempt == 0) f.harness.transport->push(ok(eventAnswer().dump()));
    auto action = f.roller.reconcile({"ns", "web"});
    REQUIRE(action.ok());
    CHECK(action->requeueAfter == kEvictionRefusedRetry);
  }
  const auto recorded = events(f.harness.transport->requests());
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0]["reason"] == "EvictionBlocked");
  CHECK(f.harness.metrics.rollEvictions.with({"statefulset", "refused"}).value() == 2);
}

TEST_CASE("what the roll leaves alone costs no eviction", "[controller][ondelete]") {
  SECTION("RollingUpdate: no request at all") {
    Fixture f;
    f.workloads.replace({rollingStatefulSet("RollingUpdate")}, "1");
    auto action = f.roller.reconcile({"ns", "web"});
    REQUIRE(action.ok());
    CHECK_FALSE(action->requeueAfter);
    CHECK(f.harness.transport->requests().empty());
  }
  SECTION("opted out: the pods are listed and counted, none evicted") {
    Fixture f;
    json sts = rollingStatefulSet();
    sts["metadata"]["annotations"] = {{"restarter.stackable.tech/ondelete", "manual"}};
    f.workloads.replace({sts}, "1");
    f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-new"}}, f.harness.clock.wallNow() - 1h);
    auto action = f.roller.reconcile({"ns", "web"});
    REQUIRE(action.ok());
    CHECK_FALSE(action->requeueAfter);
    CHECK(f.harness.transport->requests().size() == 1);
    CHECK(f.harness.metrics.outdatedPods.with({"statefulset"}).value() == 2);
  }
  SECTION("a deleted workload forgets its outdated pods") {
    Fixture f;
    json sts = rollingStatefulSet();
    sts["metadata"]["annotations"] = {{"restarter.stackable.tech/ondelete", "manual"}};
    f.workloads.replace({sts}, "1");
    f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-new"}}, f.harness.clock.wallNow() - 1h);
    REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
    f.workloads.replace({}, "2");
    REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
    CHECK(f.harness.metrics.outdatedPods.with({"statefulset"}).value() == 0);
  }
  SECTION("a pod the API describes wrongly is an error, not a crash or an eviction") {
    Fixture f;
    f.workloads.replace({rollingStatefulSet()}, "1");
    json bad = pod({"web-0", "web-old"}, f.harness.clock.wallNow());
    bad["status"]["conditions"] = "Ready";
    f.harness.transport->push(ok(podList({bad}).dump()));
    auto action = f.roller.reconcile({"ns", "web"});
    REQUIRE_FALSE(action.ok());
    CHECK(action.error().kind == restarter::core::ErrorKind::InvalidInput);
    CHECK(evictions(f.harness.transport->requests()).empty());
  }
}

TEST_CASE("a DaemonSet rolls from its newest ControllerRevision and first node first",
          "[controller][ondelete]") {
  Fixture f(false, "daemonset");
  json ds = {
      {"apiVersion", "apps/v1"},
      {"kind", "DaemonSet"},
      {"metadata", {{"name", "agent"}, {"namespace", "ns"}, {"uid", "sts-uid"}, {"generation", 2}}},
      {"spec", {{"selector", {{"matchLabels", {{"app", "web"}}}}}, {"updateStrategy", {{"type", "OnDelete"}}}}},
      {"status", {{"observedGeneration", 2}, {"desiredNumberScheduled", 2}}}};
  f.workloads.replace({ds}, "1");
  auto revision = [](int number, const char* hash) {
    return json{{"metadata",
                 {{"name", std::string("agent-") + hash},
                  {"labels", {{"controller-revision-hash", hash}}},
                  {"ownerReferences", json::array({{{"uid", "sts-uid"}, {"controller", true}}})}}},
                {"revision", number}};
  };
  f.harness.transport->push(ok(json{{"kind", "ControllerRevisionList"},
                                    {"metadata", json::object()},
                                    {"items", {revision(1, "h1"), revision(2, "h2")}}}
                                   .dump()));
  f.pods({{"agent-b", "h1", true, false, "sts-uid", "node-b"},
          {"agent-a", "h1", true, false, "sts-uid", "node-a"}},
         f.harness.clock.wallNow() - 1h);
  f.harness.transport->push(ok(R"({"kind":"Status","status":"Success"})"));
  f.harness.transport->push(ok(eventAnswer().dump()));
  REQUIRE(f.roller.reconcile({"ns", "agent"}).ok());
  const auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[0].path.find("/apis/apps/v1/namespaces/ns/controllerrevisions") == 0);
  CHECK(evictions(requests) == std::vector<std::string>{"/api/v1/namespaces/ns/pods/agent-a/eviction"});
  CHECK(f.harness.metrics.rollEvictions.with({"daemonset", "evicted"}).value() == 1);
}
