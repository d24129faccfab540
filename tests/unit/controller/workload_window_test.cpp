// The rollout window gate of WorkloadReconciler (workload_window.cpp): held outside the window,
// merged, rolled once at the opening; a wall-clock step; an invalid window.
#include <catch2/catch.hpp>

#include "restarter/base/rfc3339.hpp"
#include "restarter/controller/workload.hpp"
#include "restarter/core/rollout_window.hpp"
#include "restarter/testing/builders.hpp"
#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace workload_window_test {

using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const char* kCm = "configmap.restarter.stackable.tech/app-config";
const char* kWindow = "restarter.stackable.tech/rollout-window";

// "web" mounting ConfigMap app-config, its template annotated with version `version`, and the
// window annotation `window` (none when empty). The fake clock starts at 2027-01-15T08:00:00Z.
json statefulSet(const std::string& version, const std::string& window) {
  json object = restarter::testing::statefulSet();
  object["spec"] = {{"template",
                     {{"metadata", {{"annotations", {{kCm, version}}}}},
                      {"spec",
                       {{"volumes", {{{"name", "config"}, {"configMap", {{"name", "app-config"}}}}}},
                        {"containers", {{{"name", "app"}, {"image", "x"}}}}}}}}};
  if (!window.empty()) object["metadata"]["annotations"][kWindow] = window;
  return object;
}

json configMap(const std::string& rv) {
  return {
      {"apiVersion", "meta.k8s.io/v1"},
      {"kind", "PartialObjectMetadata"},
      {"metadata", {{"name", "app-config"}, {"namespace", "ns"}, {"uid", "cm-uid"}, {"resourceVersion", rv}}}};
}

struct Fixture {
  explicit Fixture(const std::string& window) : harness(false) {
    workloads.addIndex(kConfigMapIndex, packedReferenceIndex(restarter::core::RefKind::ConfigMap));
    reconciler = std::make_unique<WorkloadReconciler>(
        workloadResources().front(),
        [this](std::string_view) {
          return std::optional<WorkloadCaches>(WorkloadCaches{&workloads, &configMaps, &secrets});
        },
        *harness.context);
    restarter::controller::testing::seedStatefulSet(harness, workloads, statefulSet("cm-uid/1", window));
    configMaps.replace({configMap("2")}, "20");
    secrets.replace({}, "20");
  }
  std::optional<std::chrono::milliseconds> reconcile() {
    auto action = reconciler->reconcile({"ns", "web"});
    REQUIRE(action.ok());
    return action->requeueAfter;
  }
  std::vector<std::string> reasons() const {
    std::vector<std::string> out;
    for (const json& event : harness.api->events()) out.push_back(event["reason"]);
    return out;
  }
  std::string templateVersion() const {
    return restarter::controller::testing::storedStatefulSet(
        harness)["spec"]["template"]["metadata"]["annotations"][kCm];
  }
  std::size_t writes() const { return restarter::controller::testing::statefulSetWrites(harness); }
  double heldGauge() const { return harness.metrics.rolloutsHeldByWindow.with({"statefulset"}).value(); }

  restarter::controller::testing::Harness harness;
  restarter::cache::PackedStore workloads;
  restarter::cache::MetaStore configMaps;
  restarter::cache::MetaStore secrets;
  std::unique_ptr<WorkloadReconciler> reconciler;
};

const std::optional<std::chrono::milliseconds> kRecheck{restarter::core::kRolloutWindowRecheck};

}  // namespace

TEST_CASE(
    "a change outside its rollout window is held and merged with later ones and rolled once at the opening",
    "[controller][workload][window]") {
  Fixture f("09:00-10:00");  // opens an hour after the clock's start
  CHECK(f.reconcile() == kRecheck);
  CHECK(f.writes() == 0);
  CHECK(f.templateVersion() == "cm-uid/1");
  REQUIRE(f.reasons() == std::vector<std::string>{"RolloutHeld"});
  const std::string note = f.harness.api->events()[0]["note"];
  CHECK_THAT(note, Catch::StartsWith("Rollout held by the rollout window until 2027-01-15T09:00:00Z") &&
                       Catch::Contains("from restarter.stackable.tech/rollout-window") &&
                       Catch::Contains("configmap/app-config: cm-uid/1 -> cm-uid/2 (updated)"));
  // Not the interval hold's note: explain-restart does not read it as one.
  CHECK_FALSE(restarter::core::heldUntilFromNote(note));
  CHECK_THAT(f.harness.logs.str(), Catch::Contains("rollout held by the rollout window"));
  CHECK(f.heldGauge() == 1);

  // Looked at again with nothing new: not announced again.
  f.harness.clock.advance(1min);
  CHECK(f.reconcile() == kRecheck);
  CHECK(f.reasons().size() == 1);
  // A second change while held: merged, announced once as the new pending set.
  f.configMaps.replace({configMap("3")}, "21");
  CHECK(f.reconcile() == kRecheck);
  CHECK(f.reasons() == std::vector<std::string>{"RolloutHeld", "RolloutHeld"});
  CHECK(f.writes() == 0);
  // The last minute before the opening: the requeue ends at the opening, not later.
  f.harness.clock.advance(58min + 30s);
  CHECK(f.reconcile() == std::optional<std::chrono::milliseconds>(30s));
  f.harness.clock.advance(30s);
  CHECK_FALSE(f.reconcile());
  CHECK(f.writes() == 1);
  CHECK(f.templateVersion() == "cm-uid/3");
  CHECK(f.reasons() == std::vector<std::string>{"RolloutHeld", "RolloutHeld", "Restarted"});
  CHECK(f.heldGauge() == 0);
}

TEST_CASE("a wall-clock step while a change is held is noticed at the next look",
          "[controller][workload][window]") {
  Fixture f("09:00-10:00");
  CHECK(f.reconcile() == kRecheck);
  // An NTP step backwards by two hours: still held, the same opening, nothing announced again.
  f.harness.clock.stepWall(-2h);
  CHECK(f.reconcile() == kRecheck);
  CHECK(f.reasons() == std::vector<std::string>{"RolloutHeld"});
  CHECK(f.writes() == 0);
  // A step forwards into the window (monotonic time barely moved): the bounded recheck looks
  // again after a minute, and that look rolls.
  f.harness.clock.stepWall(3h);
  f.harness.clock.advance(restarter::core::kRolloutWindowRecheck);
  CHECK_FALSE(f.reconcile());
  CHECK(f.writes() == 1);
  CHECK(f.templateVersion() == "cm-uid/2");
}

TEST_CASE("an invalid rollout window is a Warning Event once per value and holds nothing",
          "[controller][workload][window]") {
  Fixture f("Mon-Fri 25:00-04:00");
  f.harness.context->rolloutWindow = *restarter::core::parseRolloutSchedule("09:00-10:00");  // not used
  CHECK_FALSE(f.reconcile());
  CHECK(f.writes() == 1);
  // Rolled at once. (Its Restarted Event has the Warning's name here: the fake clock does not
  // move within one reconcile, and Events are named by the time in nanoseconds, as client-go's.)
  CHECK_THAT(f.harness.logs.str(), Catch::Contains("restart triggered"));
  REQUIRE_FALSE(f.reasons().empty());
  CHECK(f.reasons()[0] == "InvalidRolloutWindow");
  const json warning = f.harness.api->events()[0];
  CHECK(warning["type"] == "Warning");
  CHECK(
      warning["note"] ==
      "Invalid rollout window \"Mon-Fri 25:00-04:00\" in restarter.stackable.tech/rollout-window: window 1 "
      "(\"Mon-Fri 25:00-04:00\"): \"25:00\" is not a start time (HH:MM, 00:00 to 23:59); no window holds this "
      "workload's rollouts");
  CHECK(f.heldGauge() == 0);
  // The next change with the same value: no second warning, rolled again.
  f.harness.clock.advance(1s);
  f.configMaps.replace({configMap("3")}, "21");
  f.workloads.replace({restarter::controller::testing::storedStatefulSet(f.harness)}, "12");
  CHECK_FALSE(f.reconcile());
  CHECK(f.writes() == 2);
  CHECK(f.templateVersion() == "cm-uid/3");
  CHECK(f.reasons() == std::vector<std::string>{"InvalidRolloutWindow", "Restarted"});
}

TEST_CASE("the controller's default window holds a workload without its own and always opts out",
          "[controller][workload][window]") {
  {
    Fixture f("");
    f.harness.context->rolloutWindow = *restarter::core::parseRolloutSchedule("Sat,Sun 00:00-24:00");
    f.harness.context->rolloutWindowSpec = "Sat,Sun 00:00-24:00";
    CHECK(f.reconcile() == kRecheck);  // a Friday
    CHECK(f.writes() == 0);
    CHECK_THAT(f.harness.api->events()[0]["note"].get<std::string>(),
               Catch::Contains("until 2027-01-16T00:00:00Z (\"Sat,Sun 00:00-24:00\", from --rollout-window)"));
  }
  {
    Fixture f("always");
    f.harness.context->rolloutWindow = *restarter::core::parseRolloutSchedule("Sat,Sun 00:00-24:00");
    CHECK_FALSE(f.reconcile());
    CHECK(f.writes() == 1);
  }
}

}  // namespace workload_window_test
