#include "restarter/controller/workload.hpp"

#include <algorithm>

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/rollout_mode.hpp"
#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace workload_test {

using namespace restarter::controller;
using nlohmann::json;
using restarter::core::ErrorKind;
using restarter::core::kMinRolloutFloor;
using restarter::core::kRolloutProgressRecheck;
using namespace std::chrono_literals;
using restarter::base::formatRfc3339;

namespace {

const char* kCm = "configmap.restarter.stackable.tech/app-config";
const char* kOld = "configmap.restarter.stackable.tech/old";

// "web" (restarter/testing/builders.hpp) mounting ConfigMap app-config (and with `withSecret` Secret creds).
json mountingStatefulSet(json annotations = json::object(), bool withSecret = false) {
  json spec = {{"volumes", {{{"name", "config"}, {"configMap", {{"name", "app-config"}}}}}},
               {"containers", {{{"name", "app"}, {"image", "x"}}}}};
  if (withSecret) spec["volumes"].push_back({{"name", "creds"}, {"secret", {{"secretName", "creds"}}}});
  json object = restarter::testing::statefulSet();
  object["spec"] = {
      {"template", {{"metadata", {{"annotations", std::move(annotations)}}}, {"spec", std::move(spec)}}}};
  return object;
}

json configMap(const std::string& name, const std::string& uid, const std::string& rv) {
  return {{"apiVersion", "meta.k8s.io/v1"},
          {"kind", "PartialObjectMetadata"},
          {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", uid}, {"resourceVersion", rv}}}};
}

struct Fixture {
  explicit Fixture(bool dryRun = false) : harness(dryRun) {
    workloads.addIndex(kConfigMapIndex, packedReferenceIndex(restarter::core::RefKind::ConfigMap));
    reconciler = std::make_unique<WorkloadReconciler>(
        workloadResources().front(),
        [this](std::string_view) {
          return std::optional<WorkloadCaches>(WorkloadCaches{&workloads, &configMaps, &secrets});
        },
        *harness.context);
  }
  restarter::controller::testing::Harness harness;
  restarter::cache::PackedStore workloads;
  restarter::cache::MetaStore configMaps;
  restarter::cache::MetaStore secrets;
  std::unique_ptr<WorkloadReconciler> reconciler;
};

const char* kLastRollout = "restarter.stackable.tech/last-rollout";

restarter::core::TimePoint nowOf(const Fixture& f) {
  return std::chrono::floor<std::chrono::microseconds>(f.harness.clock.wallNow());
}

// `workload` stored in the API server and, at `resourceVersion`, in the cache.
void seedWorkload(Fixture& f, const json& workload, const std::string& resourceVersion = "10") {
  restarter::controller::testing::seedStatefulSet(f.harness, f.workloads, workload, resourceVersion);
}

// "web" as the API server holds it now.
json storedWorkload(const Fixture& f) { return restarter::controller::testing::storedStatefulSet(f.harness); }

// `workload` with the last-rollout annotation a rollout at `at` wrote.
json rolledAt(json workload, restarter::core::TimePoint at) {
  workload["metadata"]["annotations"][kLastRollout] = restarter::base::formatRfc3339(at);
  return workload;
}

// How many writes reached the workload (Events not counted).
std::size_t workloadWrites(const Fixture& f) {
  return restarter::controller::testing::statefulSetWrites(f.harness);
}

// The reasons of the Events recorded, in order.
std::vector<std::string> eventReasons(const Fixture& f) {
  std::vector<std::string> reasons;
  for (const json& event : f.harness.api->events()) reasons.push_back(event["reason"]);
  return reasons;
}

// Answers every request whose method is `method` and whose path contains
// `pathPart` with status `code`, as the apiserver does when it refuses.
void refuse(Fixture& f, std::string method, std::string pathPart, long code) {
  f.harness.api->setInterceptor(
      [method = std::move(method), pathPart = std::move(pathPart),
       code](const restarter::kube::Request& request) -> std::optional<restarter::kube::Response> {
        if (request.method != method || request.path.find(pathPart) == std::string::npos) return std::nullopt;
        return restarter::kube::Response{
            code, {}, json{{"kind", "Status"}, {"code", code}, {"message", "refused"}}.dump()};
      });
}

}  // namespace

TEST_CASE("a changed ConfigMap gives one apply and one Event naming the change", "[controller][workload]") {
  Fixture f;
  const json workload = mountingStatefulSet({{kCm, "cm-uid/1"}});
  f.harness.api->seed(restarter::kube::resources::statefulSets(), workload);
  f.workloads.replace({workload}, "10");
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");

  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  // The workload as the apiserver now holds it: the new annotation, one rollout (generation 2).
  auto stored = f.harness.api->object(restarter::kube::resources::statefulSets(), "ns", "web");
  REQUIRE(stored);
  CHECK((*stored)["spec"]["template"]["metadata"]["annotations"][kCm] == "cm-uid/2");
  CHECK((*stored)["metadata"]["generation"] == 2);
  // One Event regarding it, naming the change.
  auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "Restarted");
  CHECK(events[0]["type"] == "Normal");
  CHECK(events[0]["regarding"]["kind"] == "StatefulSet");
  CHECK(events[0]["regarding"]["uid"] == "sts-uid");
  const std::string note = events[0]["note"];
  CHECK(note.find("namespace ns") != std::string::npos);
  CHECK(note.find("configmap/app-config: cm-uid/1 -> cm-uid/2 (updated)") != std::string::npos);
  // The write is a forced server-side apply of the template annotations alone, under the
  // controller's field manager: what the fake cannot judge (field ownership) the request shows.
  auto writes = f.harness.api->requests();
  REQUIRE(writes.size() == 2);
  CHECK(writes[0].path.find("fieldManager=restarter.stackable.tech%2Fstatefulset") != std::string::npos);
  CHECK(writes[0].path.find("force=true") != std::string::npos);
  json body = json::parse(writes[0].body);
  CHECK(body["metadata"]["uid"] == "sts-uid");
  CHECK(body["spec"].size() == 1);  // nothing but the template annotations
  const std::string logs = f.harness.logs.str();
  CHECK(logs.find("restart triggered") != std::string::npos);
  CHECK(logs.find("cm-uid/1 -> cm-uid/2") != std::string::npos);
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 1);
}

TEST_CASE("a rollout whose workload was replaced meanwhile writes nothing to the new one",
          "[controller][workload]") {
  // The cache still holds the deleted workload's uid; the apiserver holds a new object of that
  // name: the apply's uid precondition fails and nothing of the new one changes.
  Fixture f;
  json replacement = mountingStatefulSet({{kCm, "cm-uid/1"}});
  replacement["metadata"]["uid"] = "new-uid";
  f.harness.api->seed(restarter::kube::resources::statefulSets(), replacement);
  f.workloads.replace({mountingStatefulSet({{kCm, "cm-uid/1"}})}, "10");
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");

  auto action = f.reconciler->reconcile({"ns", "web"});
  auto stored = f.harness.api->object(restarter::kube::resources::statefulSets(), "ns", "web");
  REQUIRE(stored);
  CHECK((*stored)["spec"]["template"]["metadata"]["annotations"][kCm] == "cm-uid/1");
  CHECK((*stored)["metadata"]["generation"] == 1);
  CHECK(f.harness.api->events().empty());
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 0);
  REQUIRE_FALSE(action.ok());
  CHECK(action.error().kind == ErrorKind::Conflict);
}

TEST_CASE("matching annotations cause no request at all", "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet({{kCm, "cm-uid/2"}, {"foreign/key", "x"}}));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(f.harness.api->requests().empty());
}

TEST_CASE("a missing workload is nothing to do", "[controller][workload]") {
  Fixture f;
  f.workloads.replace({}, "10");
  f.configMaps.replace({}, "20");
  f.secrets.replace({}, "20");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(f.harness.api->requests().empty());
}

TEST_CASE("an unsynced cache is an error to retry and never a write", "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet());
  f.secrets.replace({}, "20");  // configMaps not synced
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE_FALSE(action.ok());
  CHECK(action.error().kind == ErrorKind::Unavailable);
  CHECK(retryPolicy(action.error()).retry);
  CHECK(f.harness.api->requests().empty());
}

TEST_CASE("a removed reference drops its annotation", "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet({{kCm, "cm-uid/2"}, {kOld, "old-uid/5"}}));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2"), configMap("old", "old-uid", "5")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/2"}});
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["note"].get<std::string>().find("configmap/old: old-uid/5 -> none (unreferenced)") !=
        std::string::npos);
}

TEST_CASE("a key another manager owns is removed by a guarded JSON patch", "[controller][workload]") {
  // What is judged is the patch's shape (the `test` guarding the `remove` against a concurrent
  // change) after an apply that field ownership left incomplete: the in-memory API server owns no
  // fields, so its apply keeps every key the apply omits, as for keys another manager owns.
  Fixture f;
  seedWorkload(f, mountingStatefulSet({{kCm, "cm-uid/1"}, {kOld, "old-uid/5"}}));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  auto requests = f.harness.api->requests();
  REQUIRE(requests.size() == 3);  // the apply, the patch and the Event
  json patch = json::parse(requests[1].body);
  REQUIRE(patch.is_array());
  CHECK(patch[0]["op"] == "test");
  CHECK(patch[0]["path"] == "/spec/template/metadata/annotations/configmap.restarter.stackable.tech~1old");
  CHECK(patch[0]["value"] == "old-uid/5");
  CHECK(patch[1]["op"] == "remove");
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/2"}});
}

TEST_CASE("a second trigger before the cache shows our write writes nothing", "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet({{kCm, "cm-uid/1"}}));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());  // same stale cached object
  CHECK(workloadWrites(f) == 1);
  CHECK(storedWorkload(f)["metadata"]["generation"] == 2);
  CHECK(eventReasons(f) == std::vector<std::string>{"Restarted"});
}

TEST_CASE("dry run announces once and applies nothing", "[controller][workload]") {
  Fixture f(true);
  seedWorkload(f, mountingStatefulSet({{kCm, "cm-uid/1"}}));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(workloadWrites(f) == 0);
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/1"}});
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "WouldRestart");
  CHECK(events[0]["note"].get<std::string>().find("cm-uid/1 -> cm-uid/2 (updated)") != std::string::npos);
  CHECK(f.harness.logs.str().find("dry run") != std::string::npos);
}

TEST_CASE("apply errors carry their kind to the retry policy", "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet());
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  refuse(f, "PATCH", "/statefulsets/web", 409);
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE_FALSE(action.ok());
  CHECK(action.error().kind == ErrorKind::Conflict);
  CHECK(retryPolicy(action.error()).retry);
  CHECK_FALSE(retryPolicy(restarter::core::makeError(ErrorKind::InvalidInput, "bad template")).retry);
  CHECK(f.harness.api->events().empty());
}

TEST_CASE("the reference index names namespace and object", "[controller][workload]") {
  auto index = referenceIndex(restarter::core::RefKind::Secret);
  CHECK(index(mountingStatefulSet({}, true)) == std::vector<std::string>{"ns/creds"});
  CHECK(referenceIndex(restarter::core::RefKind::ConfigMap)(mountingStatefulSet()) ==
        std::vector<std::string>{"ns/app-config"});
  CHECK(index(json{{"metadata", {{"name", "x"}}}, {"spec", 3}}).empty());
}

TEST_CASE("the cache lookup reads identity and the ignore label from metadata entries",
          "[controller][workload]") {
  restarter::cache::MetaStore configMaps;
  restarter::cache::MetaStore secrets;
  json ignored = configMap("ign", "ign-uid", "3");
  ignored["metadata"]["labels"] = {{"restarter.stackable.tech/ignore", "true"}};
  json notTrue = configMap("other", "other-uid", "4");
  notTrue["metadata"]["labels"] = {{"restarter.stackable.tech/ignore", "yes"}};
  json noUid = configMap("nouid", "", "5");
  configMaps.replace({ignored, notTrue, noUid}, "5");
  auto lookup = cacheLookup(configMaps, secrets, "ns");
  using restarter::core::Presence;
  using restarter::core::RefKind;
  auto a = lookup(RefKind::ConfigMap, "ign");
  CHECK(a.presence == Presence::Present);
  CHECK(a.uid == "ign-uid");
  CHECK(a.resourceVersion == "3");
  CHECK(a.ignoreLabel);
  CHECK_FALSE(lookup(RefKind::ConfigMap, "other").ignoreLabel);
  CHECK(lookup(RefKind::ConfigMap, "nouid").presence == Presence::Unknown);
  CHECK(lookup(RefKind::ConfigMap, "missing").presence == Presence::Absent);
  CHECK(lookup(RefKind::Secret, "creds").presence == Presence::Unknown);  // not synced
}

TEST_CASE("without a rollout record the first change rolls at once and records the time",
          "[controller][workload][interval]") {
  Fixture f;
  f.harness.context->minRolloutInterval = 20s;
  seedWorkload(f, mountingStatefulSet({{kCm, "cm-uid/1"}}));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  const json stored = storedWorkload(f);
  CHECK(stored["metadata"]["annotations"][kLastRollout] == restarter::base::formatRfc3339(nowOf(f)));
  CHECK(stored["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/2"}});
  CHECK(stored["metadata"]["generation"] == 2);
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "Restarted");
  CHECK(f.harness.metrics.rolloutsHeld.with({"statefulset"}).value() == 0);
}

TEST_CASE("a change after a rollout is held until that rollout finishes and announced once",
          "[controller][workload][interval]") {
  // A new reconciler (a restarted controller, a new leader) sees the record another replica wrote.
  Fixture f;
  f.harness.context->minRolloutInterval = 5min;
  const auto start = nowOf(f);
  // Generation 1 not yet observed by the StatefulSet controller: the last rollout is in progress.
  seedWorkload(f, rolledAt(mountingStatefulSet({{kCm, "cm-uid/1"}}), start - 5s));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");

  auto held = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(held.ok());
  REQUIRE(held->requeueAfter);
  CHECK(*held->requeueAfter == 5s);  // the end of the floor
  CHECK(workloadWrites(f) == 0);     // no write to the workload, one Event
  auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  const json event = events[0];
  CHECK(event["reason"] == "RolloutHeld");
  CHECK(event["type"] == "Normal");
  CHECK(event["regarding"]["uid"] == "sts-uid");
  const std::string note = event["note"];
  CHECK(restarter::core::heldUntilFromNote(note) == start + 5min - 5s);  // the upper bound
  CHECK_THAT(note, Catch::Contains("waiting for the previous rollout (generation 1 not yet observed") &&
                       Catch::Contains("at most one rollout per 5m") &&
                       Catch::Contains("configmap/app-config: cm-uid/1 -> cm-uid/2 (updated)"));
  const std::string logs = f.harness.logs.str();
  CHECK_THAT(logs, Catch::Contains("rollout held") &&
                       Catch::Contains("until=" + restarter::base::formatRfc3339(start + 5min - 5s)));
  CHECK(f.harness.metrics.rolloutsHeld.with({"statefulset"}).value() == 1);
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 0);

  // Further changes during the hold: merged into it, nothing written, nothing announced again.
  for (int version = 3; version <= 5; ++version) {
    f.harness.clock.advance(1s);
    f.configMaps.replace({configMap("app-config", "cm-uid", std::to_string(version))},
                         "2" + std::to_string(version));
    auto again = f.reconciler->reconcile({"ns", "web"});
    REQUIRE(again.ok());
    CHECK(again->requeueAfter == std::optional<std::chrono::milliseconds>(5s - (version - 2) * 1s));
  }
  // After the floor the rollout is still in progress: the hold goes on (the same hold, not
  // announced again), looked at again after the recheck at the latest.
  f.harness.clock.advance(2s);
  auto waiting = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(waiting.ok());
  CHECK(waiting->requeueAfter == std::optional<std::chrono::milliseconds>(kRolloutProgressRecheck));
  CHECK(workloadWrites(f) == 0);
  CHECK(f.harness.api->events().size() == 1);
  CHECK(f.harness.metrics.rolloutsHeld.with({"statefulset"}).value() == 1);

  // The previous rollout finishes (one replica, observed, updated and ready): the latest version
  // rolls at once, minutes before the interval would have let it.
  f.harness.clock.advance(3s);
  json finished = rolledAt(mountingStatefulSet({{kCm, "cm-uid/1"}}), start - 5s);
  finished["status"] = {
      {"observedGeneration", 1}, {"replicas", 1}, {"updatedReplicas", 1}, {"readyReplicas", 1}};
  finished["metadata"]["resourceVersion"] = "11";
  f.workloads.replace({finished}, "11");
  auto rolled = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(rolled.ok());
  CHECK_FALSE(rolled->requeueAfter);
  CHECK(workloadWrites(f) == 1);
  const json stored = storedWorkload(f);
  CHECK(stored["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/5"}});
  CHECK(stored["metadata"]["annotations"][kLastRollout] == restarter::base::formatRfc3339(start + 8s));
  events = f.harness.api->events();
  REQUIRE(events.size() == 2);
  CHECK(events[1]["note"].get<std::string>().find("cm-uid/1 -> cm-uid/5 (updated)") != std::string::npos);
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 1);

  // A change right after: the floor counts from that write, and its rollout is in progress
  // though the cache does not show the write yet (the finished status there is the old one's).
  f.harness.clock.advance(1s);
  f.configMaps.replace({configMap("app-config", "cm-uid", "6")}, "26");
  auto next = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(next.ok());
  CHECK(next->requeueAfter == std::optional<std::chrono::milliseconds>(9s));
  CHECK(workloadWrites(f) == 1);
  events = f.harness.api->events();
  REQUIRE(events.size() == 3);
  CHECK(events[2]["reason"] == "RolloutHeld");
  CHECK_THAT(events[2]["note"].get<std::string>(), Catch::Contains("not yet in the cache"));
  CHECK(f.harness.metrics.rolloutsHeld.with({"statefulset"}).value() == 2);
}

TEST_CASE("a rollout that never finishes holds the next change until the interval has passed",
          "[controller][workload][interval]") {
  Fixture f;
  f.harness.context->minRolloutInterval = 20s;
  const auto start = nowOf(f);
  seedWorkload(f, rolledAt(mountingStatefulSet({{kCm, "cm-uid/1"}}), start - 12s));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  auto held = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(held.ok());
  CHECK(held->requeueAfter == std::optional<std::chrono::milliseconds>(8s));  // the upper bound is nearer
  CHECK(workloadWrites(f) == 0);
  f.harness.clock.advance(8s);
  auto rolled = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(rolled.ok());
  CHECK_FALSE(rolled->requeueAfter);
  CHECK(workloadWrites(f) == 1);
  CHECK(storedWorkload(f)["metadata"]["annotations"][kLastRollout] ==
        restarter::base::formatRfc3339(start + 8s));
  CHECK(eventReasons(f) == std::vector<std::string>{"RolloutHeld", "Restarted"});
}

TEST_CASE("a rollout record more than an interval in the future does not hold the workload",
          "[controller][workload][interval]") {
  Fixture f;
  f.harness.context->minRolloutInterval = 20s;
  seedWorkload(f, rolledAt(mountingStatefulSet({{kCm, "cm-uid/1"}}), nowOf(f) + 21s));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(workloadWrites(f) == 1);
  CHECK(storedWorkload(f)["metadata"]["annotations"][kLastRollout] == restarter::base::formatRfc3339(nowOf(f)));
  CHECK(eventReasons(f) == std::vector<std::string>{"Restarted"});
}

TEST_CASE("without an interval a recent rollout holds nothing", "[controller][workload][interval]") {
  Fixture f;  // minRolloutInterval 0
  seedWorkload(f, rolledAt(mountingStatefulSet({{kCm, "cm-uid/1"}}), nowOf(f)));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/2"}});
  CHECK(eventReasons(f) == std::vector<std::string>{"Restarted"});
}

TEST_CASE("dry run announces a change within the interval and holds nothing",
          "[controller][workload][interval]") {
  Fixture f(true);
  f.harness.context->minRolloutInterval = 20s;
  seedWorkload(f, rolledAt(mountingStatefulSet({{kCm, "cm-uid/1"}}), nowOf(f) - 1s));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  CHECK(workloadWrites(f) == 0);
  CHECK(eventReasons(f) == std::vector<std::string>{"WouldRestart"});
  CHECK(f.harness.metrics.rolloutsHeld.with({"statefulset"}).value() == 0);
}

namespace {

struct StormResult {
  std::vector<restarter::core::TimePoint> rollouts;
  std::string lastWritten;
  int configVersion = 1;
};

// A ConfigMap changed ten times a second for a minute, the reconciler driven as the controller
// drives it: a queue with the 1 s debounce, every change queuing the workload, each write showing
// up in the cache and queuing it again, the requeue the reconciler asks for; time from the fake
// clock only. `finishAtOnce`: each write shows up with a status saying its rollout has finished
// (pods Ready at once), and that status change queues the workload as the controller's handler
// does; otherwise the status never shows the rollout observed.
StormResult storm(Fixture& f, bool finishAtOnce) {
  auto& clock = f.harness.clock;
  WorkQueue queue(clock, restarter::cache::BackoffPolicy{500ms, 300'000ms, 0.5});
  const QueueKey key{f.reconciler.get(), {"ns", "web"}};
  const auto debounce = 1000ms;
  seedWorkload(f, mountingStatefulSet({{kCm, "cm-uid/1"}}));
  f.configMaps.replace({configMap("app-config", "cm-uid", "1")}, "20");
  f.secrets.replace({}, "20");

  std::string seenVersion = storedWorkload(f)["metadata"]["resourceVersion"];
  StormResult result;
  auto work = [&] {
    while (auto due = queue.tryGet(clock.monotonicNow())) {
      auto action = f.reconciler->reconcile(due->key.object);
      REQUIRE(action.ok());
      queue.forget(due->key);
      if (action->requeueAfter) queue.add(due->key, QueueReason::RequeueAfter, *action->requeueAfter);
      queue.done(due->key);
      // The watch: each write reaches the cache, and the workload's update queues it again.
      json updated = storedWorkload(f);
      if (updated["metadata"]["resourceVersion"] == seenVersion) continue;
      seenVersion = updated["metadata"]["resourceVersion"];
      if (finishAtOnce) {
        updated["status"] = {{"observedGeneration", updated["metadata"]["generation"]},
                             {"updatedReplicas", 1},
                             {"readyReplicas", 1}};
      }
      f.workloads.upsert(updated);
      result.lastWritten = updated["spec"]["template"]["metadata"]["annotations"][kCm];
      result.rollouts.push_back(nowOf(f));
      queue.add(key, QueueReason::ObjectChanged, debounce);
    }
  };
  for (int tick = 0; tick < 600; ++tick) {
    f.configMaps.upsert(configMap("app-config", "cm-uid", std::to_string(++result.configVersion)));
    queue.add(key, QueueReason::ObjectChanged, debounce);
    work();
    clock.advance(100ms);
  }
  // The changes stop; time runs on until nothing is left to do (bounded: a key that kept coming
  // back would fail here, not hang).
  for (int step = 0; step < 100 && queue.nextDue(); ++step) {
    const auto due = *queue.nextDue();
    const auto now = clock.monotonicNow();
    if (due > now) clock.advance(std::chrono::ceil<std::chrono::milliseconds>(due - now));
    work();
  }
  CHECK_FALSE(queue.nextDue());
  return result;
}

std::size_t heldEvents(const Fixture& f) {
  const std::vector<std::string> reasons = eventReasons(f);
  return static_cast<std::size_t>(std::count(reasons.begin(), reasons.end(), "RolloutHeld"));
}

}  // namespace

TEST_CASE(
    "a ConfigMap changed ten times a second for a minute with rollouts that never finish rolls once per interval "
    "and ends at its last version",
    "[controller][workload][interval]") {
  Fixture f;
  f.harness.context->minRolloutInterval = 20s;
  const StormResult r = storm(f, false);
  CHECK(r.lastWritten == "cm-uid/" + std::to_string(r.configVersion));  // no change lost
  CHECK(r.rollouts.size() <= 60 / 20 + 1);
  CHECK(r.rollouts.size() >= 3);
  for (std::size_t i = 1; i < r.rollouts.size(); ++i) CHECK(r.rollouts[i] - r.rollouts[i - 1] >= 20s);
  // One RolloutHeld Event per hold (one between each two rollouts), not one per change.
  CHECK(f.harness.metrics.rolloutsHeld.with({"statefulset"}).value() ==
        static_cast<double>(r.rollouts.size() - 1));
  CHECK(heldEvents(f) == r.rollouts.size() - 1);
}

TEST_CASE(
    "a ConfigMap changed ten times a second for a minute with rollouts that finish at once rolls once per floor "
    "and ends at its last version",
    "[controller][workload][interval]") {
  Fixture f;
  f.harness.context->minRolloutInterval = 5min;
  const StormResult r = storm(f, true);
  CHECK(r.lastWritten == "cm-uid/" + std::to_string(r.configVersion));  // no change lost
  // Not once per 5 minutes: each rollout finishes at once, so only the floor spaces them.
  CHECK(r.rollouts.size() <= 60 / 10 + 1);
  CHECK(r.rollouts.size() >= 5);
  for (std::size_t i = 1; i < r.rollouts.size(); ++i)
    CHECK(r.rollouts[i] - r.rollouts[i - 1] >= kMinRolloutFloor);
  CHECK(f.harness.metrics.rolloutsHeld.with({"statefulset"}).value() ==
        static_cast<double>(r.rollouts.size() - 1));
  CHECK(heldEvents(f) == r.rollouts.size() - 1);
}

namespace {

// Template annotations of exactly `total` bytes: kCm holding `cmValue`, and a foreign filler.
json annotationsOf(std::size_t total, const std::string& cmValue) {
  const std::string filler = "example.com/filler";
  const std::size_t used = std::string(kCm).size() + cmValue.size() + filler.size();
  return {{kCm, cmValue}, {filler, std::string(total - used, 'x')}};
}

constexpr std::size_t kLimit = restarter::core::kMaxAnnotationsBytes;

}  // namespace

TEST_CASE("a rollout whose records would pass the metadata annotations limit is not applied",
          "[controller][workload]") {
  Fixture f;
  const json sts = mountingStatefulSet(json{{kCm, "cm-uid/1"}});
  f.harness.api->seed(restarter::kube::resources::statefulSets(), sts);
  // The cached copy dropped a large last-applied-configuration: its bytes still count.
  f.workloads.setEntryMaker(
      [](json&& object) { return workloadEntry(std::move(object), restarter::core::SelectionOptions{}); });
  json cached = sts;
  const std::string lastApplied = "kubectl.kubernetes.io/last-applied-configuration";
  cached["metadata"]["annotations"][lastApplied] = std::string(kLimit - 40 - lastApplied.size(), 'x');
  f.workloads.replace({cached}, "10");
  REQUIRE((*f.workloads.get("ns/web"))->trim.omittedAnnotationsBytes == kLimit - 40);
  f.configMaps.replace({configMap("app-config", "cm-uid", "10")}, "20");
  f.secrets.replace({}, "20");

  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  // The workload as it was, and one Event saying why.
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/1"}});
  CHECK(storedWorkload(f)["metadata"]["generation"] == 1);
  auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "AnnotationsTooLarge");
  const std::string note = events[0]["note"];
  CHECK(note.find("the workload's metadata annotations would be") != std::string::npos);
  CHECK(note.find("configmap/app-config: cm-uid/1 -> cm-uid/10 (updated)") != std::string::npos);
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 0);
  // Not again for the same state.
  action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(f.harness.api->events().size() == 1);
}

TEST_CASE("a change that would pass the annotations size limit is not applied and warned about once",
          "[controller][workload]") {
  Fixture f;
  // "cm-uid/1" -> "cm-uid/10": one byte more than a template exactly at the limit.
  seedWorkload(f, mountingStatefulSet(annotationsOf(kLimit, "cm-uid/1")));
  f.configMaps.replace({configMap("app-config", "cm-uid", "10")}, "20");
  f.secrets.replace({}, "20");

  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);  // no retry: the same state would be refused again
  // The workload as it was, and one Warning Event regarding it.
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"] == annotationsOf(kLimit, "cm-uid/1"));
  CHECK(storedWorkload(f)["metadata"]["generation"] == 1);
  auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  const json& event = events[0];
  CHECK(event["type"] == "Warning");
  CHECK(event["reason"] == "AnnotationsTooLarge");
  CHECK(event["regarding"]["uid"] == "sts-uid");
  const std::string note = event["note"];
  CHECK(note.find("would be 262145 bytes (now 262144)") != std::string::npos);
  CHECK(note.find("limit of 262144") != std::string::npos);
  CHECK(note.find("configmap/app-config: cm-uid/1 -> cm-uid/10 (updated)") != std::string::npos);
  const std::string logs = f.harness.logs.str();
  CHECK(logs.find("annotations too large") != std::string::npos);
  CHECK(logs.find("262145") != std::string::npos);
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 0);

  // The same state again (a resync, another trigger): no second Event, no write, no retry.
  action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  CHECK(f.harness.api->events().size() == 1);
  CHECK(storedWorkload(f)["metadata"]["generation"] == 1);
}

TEST_CASE("a change ending exactly at the annotations size limit is applied", "[controller][workload]") {
  Fixture f;
  // "cm-uid/1" -> "cm-uid/2": the template stays at exactly 262144 bytes.
  seedWorkload(f, mountingStatefulSet(annotationsOf(kLimit, "cm-uid/1")));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"] == annotationsOf(kLimit, "cm-uid/2"));
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "Restarted");
}

TEST_CASE("a refused change is warned about again when the state changes and applied once it fits",
          "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet(annotationsOf(kLimit, "cm-uid/1")));
  f.configMaps.replace({configMap("app-config", "cm-uid", "10")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(eventReasons(f) == std::vector<std::string>{"AnnotationsTooLarge"});

  // The ConfigMap changes again: a new state, a new Event.
  f.harness.clock.advance(1s);  // Events are named by the time: a second one needs a later time
  f.configMaps.replace({configMap("app-config", "cm-uid", "11")}, "21");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  auto events = f.harness.api->events();
  REQUIRE(events.size() == 2);
  CHECK(events[1]["note"].get<std::string>().find("cm-uid/1 -> cm-uid/11") != std::string::npos);
  CHECK(workloadWrites(f) == 0);

  // Someone shrinks the foreign annotation: the change now fits and is applied.
  f.harness.clock.advance(1s);
  seedWorkload(f, mountingStatefulSet(annotationsOf(kLimit - 1, "cm-uid/1")), "11");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(workloadWrites(f) == 1);
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"][kCm] == "cm-uid/11");
  CHECK(eventReasons(f) == std::vector<std::string>{"AnnotationsTooLarge", "AnnotationsTooLarge", "Restarted"});
}

TEST_CASE("a too-large Event that cannot be recorded is logged and not retried", "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet(annotationsOf(kLimit, "cm-uid/1")));
  f.configMaps.replace({configMap("app-config", "cm-uid", "10")}, "20");
  f.secrets.replace({}, "20");
  refuse(f, "POST", "/events", 503);
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK_FALSE(action->requeueAfter);
  CHECK(f.harness.api->requests().size() == 1);  // the Event, refused; no write, no retry
  CHECK(f.harness.api->events().empty());
  CHECK(f.harness.logs.str().find("cannot record annotations-too-large event") != std::string::npos);
}

TEST_CASE("dry run warns about a too-large change the same way", "[controller][workload]") {
  Fixture f(true);
  seedWorkload(f, mountingStatefulSet(annotationsOf(kLimit, "cm-uid/1")));
  f.configMaps.replace({configMap("app-config", "cm-uid", "10")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(workloadWrites(f) == 0);
  CHECK(eventReasons(f) == std::vector<std::string>{"AnnotationsTooLarge"});
}

TEST_CASE("a second trigger before the cache shows our write still counts foreign annotations",
          "[controller][workload]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet(annotationsOf(kLimit, "cm-uid/1")));
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  // The ConfigMap changes again before the workload cache shows the write: planned against what
  // was written (cm-uid/2) plus the cached foreign annotation, cm-uid/10 is one byte too many.
  f.harness.clock.advance(1s);  // Events are named by the time: a second one needs a later time
  f.configMaps.replace({configMap("app-config", "cm-uid", "10")}, "21");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(workloadWrites(f) == 1);
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"][kCm] == "cm-uid/2");
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 2);
  CHECK(events[1]["reason"] == "AnnotationsTooLarge");
  CHECK(events[1]["note"].get<std::string>().find("cm-uid/2 -> cm-uid/10") != std::string::npos);
}

TEST_CASE("a workload opted in while running gets a baseline and no rollout",
          "[controller][workload][baseline]") {
  Fixture f;
  seedWorkload(f, mountingStatefulSet());
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");

  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  json stored = storedWorkload(f);
  // Metadata only: no template annotation (nothing restarts), no last-rollout stamp (no rollout).
  CHECK(stored["spec"]["template"]["metadata"]["annotations"] == json::object());
  CHECK(stored["metadata"]["generation"] == 1);
  CHECK(stored["metadata"]["annotations"]["restarter.stackable.tech/baseline"] ==
        "configmap/app-config=cm-uid/2");
  CHECK_FALSE(stored["metadata"]["annotations"].contains(kLastRollout));
  auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "BaselineRecorded");
  CHECK(events[0]["note"].get<std::string>().find(
            "configmap/app-config: opted in: baseline recorded, no restart") != std::string::npos);
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 0);

  // Before the cache shows the write, a second trigger writes nothing; once a real change comes,
  // the rollout writes the template and empties the baseline.
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(storedWorkload(f)["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]);
  CHECK(f.harness.api->events().size() == 1);
  f.harness.clock.advance(1s);  // Events are named by the time: a second one needs a later time
  f.workloads.replace({stored}, "11");
  f.configMaps.replace({configMap("app-config", "cm-uid", "3")}, "21");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  stored = storedWorkload(f);
  CHECK(stored["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/3"}});
  CHECK(stored["metadata"]["generation"] == 2);
  CHECK(stored["metadata"]["annotations"]["restarter.stackable.tech/baseline"] == "");
  CHECK(stored["metadata"]["annotations"].contains(kLastRollout));
  events = f.harness.api->events();
  REQUIRE(events.size() == 2);
  CHECK(events[1]["note"].get<std::string>().find(
            "configmap/app-config: cm-uid/2 (baseline) -> cm-uid/3 (updated)") != std::string::npos);
}

TEST_CASE("with --roll-on-opt-in a workload opted in is rolled at once", "[controller][workload][baseline]") {
  Fixture f;
  f.harness.context->rollOnOptIn = true;
  seedWorkload(f, mountingStatefulSet());
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  const json stored = storedWorkload(f);
  CHECK(stored["spec"]["template"]["metadata"]["annotations"] == json{{kCm, "cm-uid/2"}});
  CHECK(stored["metadata"]["generation"] == 2);
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "Restarted");
}

TEST_CASE("a manual workload is never rolled: one RolloutPending Event per pending set and the gauge counts it",
          "[controller][workload][manual]") {
  Fixture f;
  json workload = mountingStatefulSet({{kCm, "cm-uid/1"}});
  workload["metadata"]["annotations"]["restarter.stackable.tech/rollout"] = "manual";
  seedWorkload(f, workload);
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  for (int i = 0; i < 3; ++i) {
    auto action = f.reconciler->reconcile({"ns", "web"});
    REQUIRE(action.ok());
    CHECK_FALSE(action->requeueAfter);
  }
  CHECK(workloadWrites(f) == 0);
  CHECK(eventReasons(f) == std::vector<std::string>{"RolloutPending"});
  const std::string note = f.harness.api->events()[0]["note"];
  CHECK_THAT(note,
             Catch::Contains("cm-uid/1 -> cm-uid/2 (updated)") &&
                 Catch::Contains("`kubectl restarter roll statefulset/web -n ns`") &&
                 Catch::Contains("pending set " + restarter::core::pendingSetDigest({{kCm, "cm-uid/2"}})));
  CHECK(f.harness.metrics.manualPending.with({"statefulset"}).value() == 1);
  CHECK(f.harness.metrics.restarts.with({"statefulset"}).value() == 0);
  CHECK_THAT(f.harness.logs.str(), Catch::Contains("rollout pending (manual mode)"));

  // Another change: another pending set, one more Event (a second later: Events are named by time).
  f.harness.clock.advance(1s);
  f.configMaps.replace({configMap("app-config", "cm-uid", "3")}, "21");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(eventReasons(f) == std::vector<std::string>{"RolloutPending", "RolloutPending"});
  CHECK(workloadWrites(f) == 0);

  // Rolled by someone else (restarter roll): nothing pending, the gauge drops.
  workload["spec"]["template"]["metadata"]["annotations"][kCm] = "cm-uid/3";
  f.workloads.replace({workload}, "11");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.harness.metrics.manualPending.with({"statefulset"}).value() == 0);
  CHECK(eventReasons(f).size() == 2);
}

TEST_CASE("a manual workload turned auto is rolled at once", "[controller][workload][manual]") {
  Fixture f;
  json workload = mountingStatefulSet({{kCm, "cm-uid/1"}});
  workload["metadata"]["annotations"]["restarter.stackable.tech/rollout"] = "manual";
  seedWorkload(f, workload);
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.harness.metrics.manualPending.with({"statefulset"}).value() == 1);
  workload["metadata"]["annotations"]["restarter.stackable.tech/rollout"] = "auto";
  seedWorkload(f, workload, "11");
  f.harness.clock.advance(1s);
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(workloadWrites(f) == 1);
  CHECK(storedWorkload(f)["spec"]["template"]["metadata"]["annotations"][kCm] == "cm-uid/2");
  CHECK(eventReasons(f) == std::vector<std::string>{"RolloutPending", "Restarted"});
  CHECK(f.harness.metrics.manualPending.with({"statefulset"}).value() == 0);
}

TEST_CASE("an invalid rollout mode is warned about once per value and rolled as auto",
          "[controller][workload][manual]") {
  Fixture f;
  json workload = mountingStatefulSet({{kCm, "cm-uid/1"}});
  workload["metadata"]["annotations"]["restarter.stackable.tech/rollout"] = "Manual";
  seedWorkload(f, workload);
  f.configMaps.replace({configMap("app-config", "cm-uid", "1")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(eventReasons(f) == std::vector<std::string>{"InvalidRolloutMode"});
  CHECK(f.harness.api->events()[0]["type"] == "Warning");
  CHECK_THAT(f.harness.api->events()[0]["note"].get<std::string>(), Catch::Contains("\"Manual\""));
  // A change: rolled as auto, no second warning for the same value.
  f.harness.clock.advance(1s);
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "21");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(eventReasons(f) == std::vector<std::string>{"InvalidRolloutMode", "Restarted"});
  CHECK(workloadWrites(f) == 1);
}

TEST_CASE("a pending set rolled and pending again is announced again", "[controller][workload][manual]") {
  Fixture f;
  json workload = mountingStatefulSet({{kCm, "cm-uid/1"}});
  workload["metadata"]["annotations"]["restarter.stackable.tech/rollout"] = "manual";
  seedWorkload(f, workload);
  f.configMaps.replace({configMap("app-config", "cm-uid", "2")}, "20");
  f.secrets.replace({}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  // Rolled (restarter roll): nothing pending.
  workload["spec"]["template"]["metadata"]["annotations"][kCm] = "cm-uid/2";
  f.workloads.replace({workload}, "11");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  // The template set back by hand: the same set is pending again, and said again.
  f.harness.clock.advance(1s);
  workload["spec"]["template"]["metadata"]["annotations"][kCm] = "cm-uid/1";
  f.workloads.replace({workload}, "12");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(eventReasons(f) == std::vector<std::string>{"RolloutPending", "RolloutPending"});
  CHECK(workloadWrites(f) == 0);
  CHECK(f.harness.metrics.manualPending.with({"statefulset"}).value() == 1);
}

}  // namespace workload_test
