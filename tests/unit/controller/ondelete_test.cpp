#include "restarter/controller/ondelete.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/time.hpp"
#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace ondelete_test {

using namespace restarter::controller;
using nlohmann::json;
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

// The names of the pods the API server still holds, in name order.
std::vector<std::string> remainingPods(const restarter::testing::FakeApiServer& api) {
  std::vector<std::string> names;
  for (const json& pod : api.objects(restarter::kube::resources::pods(), "ns"))
    names.push_back(pod["metadata"]["name"]);
  return names;
}

// How many requests the roller sent, of `method` (any when empty).
std::size_t requestCount(const restarter::testing::FakeApiServer& api, const std::string& method = "") {
  std::size_t count = 0;
  for (const auto& request : api.requests()) {
    if (method.empty() || request.method == method) ++count;
  }
  return count;
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

  restarter::testing::FakeApiServer& api() { return *harness.api; }

  // Stores the pods in the API server, each Ready (or not) since `since`.
  void pods(const std::vector<PodState>& states, restarter::base::Clock::WallTime since) {
    for (const PodState& state : states) api().seed(restarter::kube::resources::pods(), pod(state, since));
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
  auto action = f.roller.reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(action->requeueAfter == kRollPoll);
  CHECK(remainingPods(f.api()) == std::vector<std::string>{"web-0", "web-1", "web-9"});
  // The eviction named the pod's uid: a pod recreated under that name in the meantime is not evicted.
  const auto requests = f.api().requests();
  const auto eviction = std::find_if(requests.begin(), requests.end(), [](const auto& request) {
    return request.path.find("/eviction") != std::string::npos;
  });
  REQUIRE(eviction != requests.end());
  CHECK(json::parse(eviction->body)["deleteOptions"]["preconditions"]["uid"] == "web-2-uid");
  const auto recorded = f.api().events();
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
  const auto before = remainingPods(f.api());
  auto action = f.roller.reconcile({"ns", "web"});
  REQUIRE(action.ok());
  REQUIRE(action->requeueAfter);
  CHECK(*action->requeueAfter <= kRollPoll);
  CHECK(requestCount(f.api()) == 1);  // the list of pods
  CHECK(remainingPods(f.api()) == before);
  CHECK(f.harness.metrics.outdatedPods.with({"statefulset"}).value() == 2);
}

TEST_CASE("a replacement not Ready within the timeout pauses the roll with one Warning",
          "[controller][ondelete]") {
  Fixture f;
  f.workloads.replace({rollingStatefulSet()}, "1");
  const auto longAgo = f.harness.clock.wallNow() - 61s;
  f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-new", false}}, longAgo);
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  CHECK(remainingPods(f.api()).size() == 3);
  const auto recorded = f.api().events();
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
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  REQUIRE(f.roller.reconcile({"ns", "web"}).ok());
  CHECK(remainingPods(f.api()).size() == 3);
  const auto recorded = f.api().events();
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
  f.pods({{"web-0", "web-old"}, {"web-1", "web-old"}, {"web-2", "web-old"}}, f.harness.clock.wallNow() - 1h);
  // The apiserver's answer while a budget allows no disruption.
  f.api().setInterceptor(
      [](const restarter::kube::Request& request) -> std::optional<restarter::kube::Response> {
        if (request.path.find("/eviction") == std::string::npos) return std::nullopt;
        return restarter::kube::Response{
            429, {}, R"({"kind":"Status","status":"Failure","reason":"TooManyRequests",
        "message":"Cannot evict pod as it would violate the pod's disruption budget.","code":429})"};
      });
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto action = f.roller.reconcile({"ns", "web"});
    REQUIRE(action.ok());
    CHECK(action->requeueAfter == kEvictionRefusedRetry);
  }
  CHECK(remainingPods(f.api()).size() == 3);
  const auto recorded = f.api().events();
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
    CHECK(requestCount(f.api()) == 0);
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
    CHECK(requestCount(f.api()) == 1);  // the list of pods
    CHECK(remainingPods(f.api()).size() == 3);
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
    f.api().seed(restarter::kube::resources::pods(), bad);
    auto action = f.roller.reconcile({"ns", "web"});
    REQUIRE_FALSE(action.ok());
    CHECK(action.error().kind == restarter::core::ErrorKind::InvalidInput);
    CHECK(requestCount(f.api(), "POST") == 0);
    CHECK(remainingPods(f.api()) == std::vector<std::string>{"web-0"});
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
                  {"namespace", "ns"},
                  // As the DaemonSet controller labels them: its selector's labels and the hash.
                  {"labels", {{"app", "web"}, {"controller-revision-hash", hash}}},
                  {"ownerReferences", json::array({{{"uid", "sts-uid"}, {"controller", true}}})}}},
                {"revision", number}};
  };
  f.api().seed(restarter::kube::resources::controllerRevisions(), revision(1, "h1"));
  f.api().seed(restarter::kube::resources::controllerRevisions(), revision(2, "h2"));
  f.pods({{"agent-b", "h1", true, false, "sts-uid", "node-b"},
          {"agent-a", "h1", true, false, "sts-uid", "node-a"}},
         f.harness.clock.wallNow() - 1h);
  REQUIRE(f.roller.reconcile({"ns", "agent"}).ok());
  CHECK(remainingPods(f.api()) == std::vector<std::string>{"agent-b"});
  CHECK(f.harness.metrics.rollEvictions.with({"daemonset", "evicted"}).value() == 1);
}

}  // namespace ondelete_test
